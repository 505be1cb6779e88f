/**
 * The structural schema of the types a cluster keeps about workloads: Pods, Events
 * (stored in their core/v1 form) and EndpointSlices. Fields the server would decode
 * into Go types are named, so unknown ones are pruned and wrong JSON types are a 400;
 * parts LocalCluster never reads (probes, volumes, affinity) are kept whole.
 */
import {
  atomicList,
  mapList,
  objectMeta,
  scalar,
  scalars,
  setList,
  type Shape,
  stringMap,
  struct,
  typed,
  unknown
} from "./shape.js"

const int32 = typed("int32")
const int64 = typed("int64")
const bool = typed("bool")

const containerPort = struct({ ...scalars("name", "protocol", "hostIP"), containerPort: int32, hostPort: int32 })
const container = struct({
  ...scalars("name", "image", "workingDir", "imagePullPolicy", "terminationMessagePath", "terminationMessagePolicy"),
  command: atomicList(scalar),
  args: atomicList(scalar),
  ports: mapList(["containerPort", "protocol"], containerPort, { protocol: "TCP" }),
  env: mapList(["name"], struct({ ...scalars("name", "value"), valueFrom: unknown })),
  envFrom: atomicList(unknown),
  resources: unknown,
  volumeMounts: mapList(["mountPath"], unknown),
  livenessProbe: unknown,
  readinessProbe: unknown,
  startupProbe: unknown,
  lifecycle: unknown,
  securityContext: unknown,
  restartPolicy: scalar,
  stdin: bool,
  stdinOnce: bool,
  tty: bool
})

const podCondition = struct({
  ...scalars("type", "status", "lastProbeTime", "lastTransitionTime", "reason", "message"),
  observedGeneration: int64
})

const podShape: Shape = struct({
  apiVersion: scalar,
  kind: scalar,
  metadata: objectMeta,
  spec: struct({
    containers: mapList(["name"], container),
    initContainers: mapList(["name"], container),
    volumes: mapList(["name"], unknown),
    ...scalars(
      "restartPolicy",
      "dnsPolicy",
      "serviceAccountName",
      "serviceAccount",
      "nodeName",
      "hostname",
      "subdomain",
      "schedulerName",
      "priorityClassName",
      "preemptionPolicy",
      "runtimeClassName"
    ),
    terminationGracePeriodSeconds: int64,
    activeDeadlineSeconds: int64,
    automountServiceAccountToken: bool,
    hostNetwork: bool,
    hostPID: bool,
    hostIPC: bool,
    enableServiceLinks: bool,
    priority: int32,
    nodeSelector: stringMap(true),
    securityContext: unknown,
    imagePullSecrets: atomicList(unknown),
    affinity: unknown,
    tolerations: atomicList(unknown),
    readinessGates: atomicList(struct(scalars("conditionType")))
  }),
  status: struct({
    ...scalars("phase", "message", "reason", "nominatedNodeName", "hostIP", "podIP", "startTime", "qosClass"),
    conditions: mapList(["type"], podCondition),
    hostIPs: mapList(["ip"], struct(scalars("ip"))),
    podIPs: mapList(["ip"], struct(scalars("ip"))),
    initContainerStatuses: atomicList(unknown),
    containerStatuses: atomicList(unknown)
  })
})

const objectReference = struct(
  scalars("kind", "namespace", "name", "uid", "apiVersion", "resourceVersion", "fieldPath"),
  {
    atomic: true
  }
)

/** A core/v1 Event, the form both Event views are stored in. */
const eventShape: Shape = struct({
  apiVersion: scalar,
  kind: scalar,
  metadata: objectMeta,
  involvedObject: objectReference,
  related: objectReference,
  ...scalars(
    "reason",
    "message",
    "firstTimestamp",
    "lastTimestamp",
    "type",
    "eventTime",
    "action",
    "reportingComponent",
    "reportingInstance"
  ),
  source: struct(scalars("component", "host")),
  count: int32,
  series: struct({ count: int32, lastObservedTime: scalar })
})

const endpointSliceShape: Shape = struct({
  apiVersion: scalar,
  kind: scalar,
  metadata: objectMeta,
  addressType: scalar,
  endpoints: atomicList(
    struct({
      addresses: setList,
      conditions: struct({ ready: bool, serving: bool, terminating: bool }),
      ...scalars("hostname", "nodeName", "zone"),
      targetRef: objectReference,
      deprecatedTopology: stringMap(),
      hints: unknown
    })
  ),
  ports: atomicList(struct({ ...scalars("name", "protocol", "appProtocol"), port: int32 }))
})

/** The shapes of the workload types, by qualified resource name. */
export const workloadShapes: ReadonlyArray<readonly [string, Shape]> = [
  ["pods", podShape],
  ["events", eventShape],
  ["endpointslices.discovery.k8s.io", endpointSliceShape]
]
