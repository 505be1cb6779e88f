/**
 * What the server fills into a Pod beyond the defaults its description declares
 * (`workloadDescriptions.ts`, applied first): the pull policy, which depends on the
 * image's tag, the service account alias, what the default admission plugins add
 * (priority, the not-ready and unreachable tolerations), the QoS class, and the times of
 * its conditions; and an EndpointSlice's lists, which read as null when empty.
 */
import type { KubeObject } from "session-routing/kubernetes"
import type { ServedResource } from "../ServedResources.js"
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

const containerDefaults = (value: unknown): unknown =>
  isObject(value) && value.imagePullPolicy === undefined
    ? { ...value, imagePullPolicy: pullPolicyFor(value.image) }
    : value

/** A condition's two times are structs without omitempty: one never written reads as null. */
const conditionTimes = (value: unknown): unknown =>
  isObject(value)
    ? { ...value, lastProbeTime: value.lastProbeTime ?? null, lastTransitionTime: value.lastTransitionTime ?? null }
    : value

const hasResources = (containers: unknown): boolean =>
  Array.isArray(containers) &&
  containers.some((c) => isObject(c) && isObject(c.resources) && Object.keys(c.resources).length > 0)

/**
 * A Pod with the defaults its description cannot declare filled in: those worked out
 * from other fields, and those the default admission plugins add.
 */
export const podDefaults = (object: KubeObject): KubeObject => {
  const json = object as unknown as Json
  const spec: Json = isObject(json.spec) ? { ...json.spec } : {}
  if (Array.isArray(spec.containers)) spec.containers = spec.containers.map(containerDefaults)
  if (Array.isArray(spec.initContainers)) spec.initContainers = spec.initContainers.map(containerDefaults)
  // The deprecated alias follows the (defaulted) service account name.
  orDefault(spec, "serviceAccount", spec.serviceAccountName)
  // The Priority and DefaultTolerationSeconds admission plugins.
  orDefault(spec, "priority", 0)
  orDefault(spec, "preemptionPolicy", "PreemptLowerPriority")
  orDefault(spec, "tolerations", DEFAULT_TOLERATIONS)
  const status: Json = isObject(json.status) ? { ...json.status } : {}
  // Without requests or limits a Pod is BestEffort; LocalCluster does not tell Burstable from Guaranteed.
  orDefault(status, "qosClass", hasResources(spec.containers) ? "Burstable" : "BestEffort")
  if (Array.isArray(status.conditions)) status.conditions = status.conditions.map(conditionTimes)
  return { ...object, spec, status } as KubeObject
}

/**
 * An EndpointSlice's endpoints and ports: neither has omitempty, and an empty list is
 * stored as none, so the server answers a slice without any with `null` for each.
 */
export const endpointSliceDefaults = (object: KubeObject): KubeObject => {
  const json = object as unknown as Json
  const orNull = (value: unknown) => (Array.isArray(value) && value.length > 0 ? value : null)
  return { ...object, endpoints: orNull(json.endpoints), ports: orNull(json.ports) } as KubeObject
}

/** The defaults of the workload types; other types unchanged. */
export const workloadDefaults = (resource: ServedResource<unknown>, object: KubeObject): KubeObject => {
  if (resource.group === "" && resource.kind === "Pod") return podDefaults(object)
  if (resource.group === "discovery.k8s.io" && resource.kind === "EndpointSlice") return endpointSliceDefaults(object)
  return object
}
