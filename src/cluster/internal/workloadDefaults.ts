/**
 * What the server fills into a Pod: the core/v1 defaults of the Pod spec and its
 * containers, what the default admission plugins add (service account, priority,
 * the not-ready and unreachable tolerations), and the status a new Pod starts with;
 * and an EndpointSlice's port defaults.
 */
import type { KubeObject } from "../../domain/Objects.js"
import type { ResourceType } from "../../domain/Resources.js"
import { isObject } from "./json.js"

type Json = Record<string, unknown>

// DefaultTolerationSeconds: a Pod waits five minutes on a node gone not-ready or unreachable.
const DEFAULT_TOLERATIONS = ["node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"].map((key) => ({
  key,
  operator: "Exists",
  effect: "NoExecute",
  tolerationSeconds: 300
}))

const orDefault = (json: Json, key: string, value: unknown): void => {
  if (json[key] === undefined) json[key] = value
}

// `latest`, or no tag at all, is pulled every time; a digest or another tag only when missing.
const pullPolicyFor = (image: unknown): string => {
  if (typeof image !== "string" || image.includes("@")) return "IfNotPresent"
  const lastPart = image.slice(image.lastIndexOf("/") + 1)
  const colon = lastPart.lastIndexOf(":")
  return colon < 0 || lastPart.slice(colon + 1) === "latest" ? "Always" : "IfNotPresent"
}

const containerDefaults = (value: unknown): unknown => {
  if (!isObject(value)) return value
  const container: Json = { ...value }
  orDefault(container, "terminationMessagePath", "/dev/termination-log")
  orDefault(container, "terminationMessagePolicy", "File")
  orDefault(container, "imagePullPolicy", pullPolicyFor(container.image))
  orDefault(container, "resources", {})
  if (Array.isArray(container.ports)) {
    container.ports = container.ports.map((
      p: unknown
    ) => (isObject(p) && p.protocol === undefined ? { ...p, protocol: "TCP" } : p))
  }
  return container
}

const hasResources = (containers: unknown): boolean =>
  Array.isArray(containers) &&
  containers.some((c) => isObject(c) && isObject(c.resources) && Object.keys(c.resources).length > 0)

/** A Pod with the server's defaults filled in where its fields are absent. */
export const podDefaults = (object: KubeObject): KubeObject => {
  const json = object as unknown as Json
  const spec: Json = isObject(json.spec) ? { ...json.spec } : {}
  if (Array.isArray(spec.containers)) spec.containers = spec.containers.map(containerDefaults)
  if (Array.isArray(spec.initContainers)) spec.initContainers = spec.initContainers.map(containerDefaults)
  orDefault(spec, "restartPolicy", "Always")
  orDefault(spec, "terminationGracePeriodSeconds", 30)
  orDefault(spec, "dnsPolicy", "ClusterFirst")
  orDefault(spec, "securityContext", {})
  orDefault(spec, "schedulerName", "default-scheduler")
  orDefault(spec, "serviceAccountName", "default")
  orDefault(spec, "serviceAccount", spec.serviceAccountName)
  orDefault(spec, "enableServiceLinks", true)
  orDefault(spec, "priority", 0)
  orDefault(spec, "preemptionPolicy", "PreemptLowerPriority")
  orDefault(spec, "tolerations", DEFAULT_TOLERATIONS)
  const status: Json = isObject(json.status) ? { ...json.status } : {}
  orDefault(status, "phase", "Pending")
  // Without requests or limits a Pod is BestEffort; LocalCluster does not tell Burstable from Guaranteed.
  orDefault(status, "qosClass", hasResources(spec.containers) ? "Burstable" : "BestEffort")
  return { ...object, spec, status } as KubeObject
}

/** An EndpointSlice's ports default to TCP and to the empty name. */
export const endpointSliceDefaults = (object: KubeObject): KubeObject => {
  const json = object as unknown as Json
  if (!Array.isArray(json.ports)) return object
  return {
    ...object,
    ports: json.ports.map((p: unknown) => (isObject(p) ? { name: "", protocol: "TCP", ...p } : p))
  } as KubeObject
}

/** The defaults of the workload types; other types unchanged. */
export const workloadDefaults = (resource: ResourceType<unknown>, object: KubeObject): KubeObject =>
  resource.group === "" && resource.kind === "Pod"
    ? podDefaults(object)
    : resource.group === "discovery.k8s.io" && resource.kind === "EndpointSlice"
    ? endpointSliceDefaults(object)
    : object
