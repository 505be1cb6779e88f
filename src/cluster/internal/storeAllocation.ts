/**
 * Cluster IPs and node ports: the registry allocates them after admission, keeps
 * them across updates, and releases them when a Service goes.
 */
import type { KubeObject } from "../../domain/Objects.js"
import { type ResourceType, ServiceResource } from "../../domain/Resources.js"
import { isObject } from "../ServerSideApply.js"
import type { StoreState } from "./storeHistory.js"
import { asJson, type Json } from "./storeObjects.js"
import { failure, refuse } from "./storeStatus.js"

/** Allocates from, and releases to, the state's IP and node port sets. */
export const makeAllocator = (state: StoreState) => {
  /** Cluster IPs and node ports, which the registry allocates after admission; kept across updates. */
  const allocate = (
    resource: ResourceType<KubeObject>,
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
    for (let n = 10; n < 65536 * 16; n++) {
      const ip = `10.${96 + Math.floor(n / 65536)}.${Math.floor(n / 256) % 256}.${n % 256}`
      if (!state.allocatedIps.has(ip)) {
        if (commit) state.allocatedIps.add(ip)
        return ip
      }
    }
    return refuse(
      failure(500, "InternalError", "Internal error occurred: failed to allocate a serviceIP: range is full")
    )
  }

  const nextNodePort = (commit: boolean): number => {
    for (let port = 30000; port <= 32767; port++) {
      if (!state.allocatedNodePorts.has(port)) {
        if (commit) state.allocatedNodePorts.add(port)
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
    if (typeof spec.clusterIP === "string") state.allocatedIps.delete(spec.clusterIP)
    if (Array.isArray(spec.ports)) {
      for (const p of spec.ports) {
        if (isObject(p) && typeof p.nodePort === "number") state.allocatedNodePorts.delete(p.nodePort)
      }
    }
  }

  return { allocate, release }
}
