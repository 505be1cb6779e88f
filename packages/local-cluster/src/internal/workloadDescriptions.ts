/**
 * The types a cluster keeps about workloads, described once: Pods, Events (stored in
 * their core/v1 form, served in their events.k8s.io/v1 one too) and EndpointSlices. Fields the server would decode into Go types
 * are named, so unknown ones are pruned and wrong JSON types are a 400; parts
 * LocalCluster never reads (probes, volumes, affinity) are kept whole. The value sets
 * and bounds their validators (`workloadValidation.ts`) check are declared here.
 */
import {
  bool,
  int32,
  int64,
  type KindDescription,
  list,
  listMap,
  map,
  microTime,
  object,
  setOf,
  string,
  strings,
  unknown,
  untyped
} from "./typeDescription.js"

/** The protocols a container port or an EndpointSlice port may carry. */
export const PROTOCOLS = ["SCTP", "TCP", "UDP"] as const
export const RESTART_POLICIES = ["Always", "Never", "OnFailure"] as const
export const DNS_POLICIES = ["ClusterFirst", "ClusterFirstWithHostNet", "Default", "None"] as const
export const PULL_POLICIES = ["Always", "IfNotPresent", "Never"] as const
export const TERMINATION_MESSAGE_POLICIES = ["FallbackToLogsOnError", "File"] as const

/** The longest `reportingInstance`, `action` and `reason` an Event may have. */
export const EVENT_FIELD_LIMIT = 128
/** The longest Event message (`note` in events.k8s.io/v1). */
export const EVENT_NOTE_LIMIT = 1024

export const ADDRESS_TYPES = ["FQDN", "IPv4", "IPv6"] as const
export const MAX_ENDPOINTS = 1000
export const MAX_PORTS = 100
export const MAX_ADDRESSES = 100

const containerPort = object({
  name: string(),
  // `+default="TCP"` in the Go type: an item without a protocol means TCP, also as a key.
  protocol: string({ enum: PROTOCOLS, default: "TCP" }),
  hostIP: string(),
  containerPort: int32(),
  hostPort: int32()
})

const container = object({
  ...strings("name", "image", "workingDir"),
  // Defaulted from the image's tag (`workloadDefaults.ts`): a value no description holds.
  imagePullPolicy: string({ enum: PULL_POLICIES }),
  terminationMessagePath: string({ serverDefault: "/dev/termination-log" }),
  terminationMessagePolicy: string({ enum: TERMINATION_MESSAGE_POLICIES, serverDefault: "File" }),
  command: list(string()),
  args: list(string()),
  ports: listMap(["containerPort", "protocol"], containerPort),
  env: listMap(["name"], object({ ...strings("name", "value"), valueFrom: unknown })),
  envFrom: list(unknown),
  resources: untyped({ serverDefault: {} }),
  volumeMounts: listMap(["mountPath"], unknown),
  livenessProbe: unknown,
  readinessProbe: unknown,
  startupProbe: unknown,
  lifecycle: unknown,
  securityContext: unknown,
  restartPolicy: string(),
  stdin: bool(),
  stdinOnce: bool(),
  tty: bool()
})

const podCondition = object({
  ...strings("type", "status", "lastProbeTime", "lastTransitionTime", "reason", "message"),
  observedGeneration: int64()
})

/** Pod v1: its containers and how they run, and the status the kubelet reports. */
export const podDescription: KindDescription = {
  spec: object({
    containers: listMap(["name"], container),
    initContainers: listMap(["name"], container),
    volumes: listMap(["name"], unknown),
    restartPolicy: string({ enum: RESTART_POLICIES, serverDefault: "Always" }),
    dnsPolicy: string({ enum: DNS_POLICIES, serverDefault: "ClusterFirst" }),
    serviceAccountName: string({ serverDefault: "default" }),
    ...strings("serviceAccount", "nodeName", "hostname", "subdomain"),
    schedulerName: string({ serverDefault: "default-scheduler" }),
    ...strings("priorityClassName", "preemptionPolicy", "runtimeClassName"),
    terminationGracePeriodSeconds: int64({ serverDefault: 30 }),
    activeDeadlineSeconds: int64(),
    automountServiceAccountToken: bool(),
    hostNetwork: bool(),
    hostPID: bool(),
    hostIPC: bool(),
    enableServiceLinks: bool({ serverDefault: true }),
    priority: int32(),
    nodeSelector: map(string(), { atomic: true }),
    securityContext: untyped({ serverDefault: {} }),
    imagePullSecrets: list(unknown),
    affinity: unknown,
    tolerations: list(unknown),
    readinessGates: list(object(strings("conditionType")))
  }, { serverDefault: {} }),
  // A new Pod is Pending until scheduled; its QoS class is worked out from its resources (`workloadDefaults.ts`).
  status: object({
    phase: string({ serverDefault: "Pending" }),
    ...strings("message", "reason", "nominatedNodeName", "hostIP", "podIP", "startTime", "qosClass"),
    conditions: listMap(["type"], podCondition),
    hostIPs: listMap(["ip"], object(strings("ip"))),
    podIPs: listMap(["ip"], object(strings("ip"))),
    initContainerStatuses: list(unknown),
    containerStatuses: list(unknown)
  }, { serverDefault: {} })
}

/** An ObjectReference: which object an Event is about, or which Pod an endpoint is; owned as one value. */
const objectReference = object(
  strings("kind", "namespace", "name", "uid", "apiVersion", "resourceVersion", "fieldPath"),
  { atomic: true }
)

/** A core/v1 Event, the form both Event views are stored in. */
export const eventDescription: Extract<KindDescription, { fields: unknown }> = {
  fields: {
    involvedObject: objectReference,
    related: objectReference,
    reason: string({ maxLength: EVENT_FIELD_LIMIT }),
    message: string({ maxLength: EVENT_NOTE_LIMIT }),
    ...strings("firstTimestamp", "lastTimestamp", "type"),
    // MicroTimes: a time in another layout (`Date.toISOString`'s milliseconds) is a 400.
    eventTime: microTime(),
    action: string({ maxLength: EVENT_FIELD_LIMIT }),
    reportingComponent: string(),
    reportingInstance: string({ maxLength: EVENT_FIELD_LIMIT }),
    source: object(strings("component", "host")),
    count: int32(),
    series: object({ count: int32(), lastObservedTime: microTime() })
  }
}

/**
 * The fields events.k8s.io/v1 renames, as [core/v1 name, events.k8s.io/v1 name]; the
 * others (and metadata) are named alike in both.
 */
export const EVENT_V1_RENAMES: ReadonlyArray<readonly [string, string]> = [
  ["involvedObject", "regarding"],
  ["message", "note"],
  ["reportingComponent", "reportingController"],
  ["source", "deprecatedSource"],
  ["firstTimestamp", "deprecatedFirstTimestamp"],
  ["lastTimestamp", "deprecatedLastTimestamp"],
  ["count", "deprecatedCount"]
]

/**
 * An events.k8s.io/v1 Event: the core/v1 Event under the newer names, as the server
 * converts one into the other, so the two views cannot describe different fields.
 */
export const eventV1Description: KindDescription = {
  fields: Object.fromEntries(
    Object.entries(eventDescription.fields).map(([name, field]) => [
      EVENT_V1_RENAMES.find(([core]) => core === name)?.[1] ?? name,
      field
    ])
  )
}

/** EndpointSlice v1: a Service's endpoints of one address type, and the ports they serve on. */
export const endpointSliceDescription: KindDescription = {
  fields: {
    addressType: string({ enum: ADDRESS_TYPES }),
    endpoints: list(
      object({
        addresses: setOf(string(), { maxItems: MAX_ADDRESSES }),
        conditions: object({ ready: bool(), serving: bool(), terminating: bool() }),
        ...strings("hostname", "nodeName", "zone"),
        targetRef: objectReference,
        deprecatedTopology: map(),
        hints: unknown
      }),
      { maxItems: MAX_ENDPOINTS }
    ),
    ports: list(
      object({
        name: string({ serverDefault: "" }),
        protocol: string({ enum: PROTOCOLS, serverDefault: "TCP" }),
        appProtocol: string(),
        port: int32()
      }),
      { maxItems: MAX_PORTS }
    )
  }
}
