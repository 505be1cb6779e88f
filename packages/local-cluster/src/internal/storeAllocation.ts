/**
 * Cluster IPs and node ports: the registry allocates them after admission, keeps
 * them across updates, and releases them when a Service goes.
 */
import { type KubeObject } from "session-routing/kubernetes"
import { type ServedResource, ServiceResource } from "../ServedResources.js"
import { isObject } from "../ServerSideApply.js"
import type { StoreState } from "./storeHistory.js"
import { asJson, type Json } from "./storeObjects.js"
import { failure, refuse } from "./storeStatus.js"

/** Cluster IPs are handed out from 10.96.0.10 on, the lowest free one first. */
const FIRST_IP = 10
const IP_END = 65536 * 16
const FIRST_NODE_PORT = 30000
const LAST_NODE_PORT = 32767

const ipAt = (n: number): string => `10.${96 + Math.floor(n / 65536)}.${Math.floor(n / 256) % 256}.${n % 256}`

/** The index `ipAt` made `ip` from, if it did. */
const indexOfIp = (ip: string): number | undefined => {
  const match = /^10\.(\d+)\.(\d+)\.(\d+)$/.exec(ip)
  if (match === null) return undefined
  const n = (Number(match[1]) - 96) * 65536 + Number(match[2]) * 256 + Number(match[3])
  return n >= FIRST_IP && n < IP_END && ipAt(n) === ip ? n : undefined
}

/**
 * Allocates from, and releases to, the state's IP and node port sets. Each search for a
 * free one starts at a cursor below which everything is taken (a release moves it back),
 * so a Service costs the same to create as the first one did, not a scan past every
 * address already handed out.
 */
export const makeAllocator = (state: StoreState) => {
  let ipCursor = FIRST_IP
  let nodePortCursor = FIRST_NODE_PORT
  /** Cluster IPs and node ports, which the registry allocates after admission; kept across updates. */
  const allocate = (
    resource: ServedResource<KubeObject>,
    object: KubeObject,
    live: KubeObject | undefined,
    commit: boolean
  ): KubeObject => {
    if (resource !== ServiceResource) return object
    const json = asJson(object)
    const spec: Json = isObject(json.spec) ? { ...json.spec } : {}
    const liveSpec = live === undefined ? {} : (asJson(live).spec as Json | undefined) ?? {}
    const type = spec.type
    if (type === "ExternalName") return object
    if (spec.clusterIP === undefined || spec.clusterIP === "") {
      if (typeof liveSpec.clusterIP === "string" && liveSpec.clusterIP !== "") {
        spec.clusterIP = liveSpec.clusterIP
      } else {
        spec.clusterIP = nextIp(commit)
      }
    }
    if (spec.clusterIPs === undefined) spec.clusterIPs = [spec.clusterIP]
    if (spec.clusterIP !== "None" || spec.ipFamilies === undefined) {
      if (spec.ipFamilies === undefined) spec.ipFamilies = liveSpec.ipFamilies ?? ["IPv4"]
    }
    if (spec.ipFamilyPolicy === undefined) spec.ipFamilyPolicy = liveSpec.ipFamilyPolicy ?? "SingleStack"
    if ((type === "NodePort" || type === "LoadBalancer") && Array.isArray(spec.ports)) {
      const livePorts = Array.isArray(liveSpec.ports) ? (liveSpec.ports as Array<Json>) : []
      spec.ports = spec.ports.map((p: unknown) => {
        if (!isObject(p) || (typeof p.nodePort === "number" && p.nodePort !== 0)) return p
        const same = livePorts.find((l) => l.port === p.port && (l.protocol ?? "TCP") === (p.protocol ?? "TCP"))
        return { ...p, nodePort: typeof same?.nodePort === "number" ? same.nodePort : nextNodePort(commit) }
      })
    }
    return { ...object, spec } as KubeObject
  }

  const nextIp = (commit: boolean): string => {
    for (let n = ipCursor; n < IP_END; n++) {
      const ip = ipAt(n)
      if (!state.allocatedIps.has(ip)) {
        ipCursor = n
        if (commit) {
          state.allocatedIps.add(ip)
          ipCursor = n + 1
        }
        return ip
      }
    }
    return refuse(
      failure(500, "InternalError", "Internal error occurred: failed to allocate a serviceIP: range is full")
    )
  }

  const nextNodePort = (commit: boolean): number => {
    for (let port = nodePortCursor; port <= LAST_NODE_PORT; port++) {
      if (!state.allocatedNodePorts.has(port)) {
        nodePortCursor = port
        if (commit) {
          state.allocatedNodePorts.add(port)
          nodePortCursor = port + 1
        }
        return port
      }
    }
    return refuse(
      failure(500, "InternalError", "Internal error occurred: failed to allocate a nodePort: range is full")
    )
  }

  const release = (object: KubeObject): void => {
    const spec = asJson(object).spec
    if (!isObject(spec)) return
    if (typeof spec.clusterIP === "string" && state.allocatedIps.delete(spec.clusterIP)) {
      const n = indexOfIp(spec.clusterIP)
      if (n !== undefined && n < ipCursor) ipCursor = n
    }
    if (Array.isArray(spec.ports)) {
      for (const p of spec.ports) {
        if (isObject(p) && typeof p.nodePort === "number" && state.allocatedNodePorts.delete(p.nodePort)) {
          if (p.nodePort >= FIRST_NODE_PORT && p.nodePort < nodePortCursor) nodePortCursor = p.nodePort
        }
      }
    }
  }

  return { allocate, release }
}
