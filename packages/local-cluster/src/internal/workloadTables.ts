/**
 * The `kubectl get` columns of the workload types, as the API server's table printers
 * define them: Pods (ready containers, status, restarts; with `-o wide` the address,
 * node and readiness gates), Events in either API (last seen, type, reason, object,
 * message) and EndpointSlices (address type, ports, endpoints).
 */
import type { Column } from "./tables.js"

/** What the columns borrow from the table module: its Name and Age columns and its duration format. */
export interface TableBase {
  readonly name: Column
  readonly age: Column
  readonly since: (timestamp: unknown, now: number) => string
}

type Json = Record<string, unknown>

const record = (
  value: unknown
): Json => (typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Json) : {})
const list = (value: unknown): ReadonlyArray<unknown> => (Array.isArray(value) ? value : [])
const text = (value: unknown): string => (typeof value === "string" ? value : "")
const column = (name: string, description: string, cell: Column["cell"], priority = 0): Column => ({
  name,
  type: name === "Restarts" || name === "Count" ? "integer" : "string",
  description,
  ...(priority > 0 ? { priority } : {}),
  cell
})

/** The status of the Pod's condition of `type`, if it has one. */
const conditionStatus = (pod: Json, type: string): string | undefined => {
  const found = list(record(pod.status).conditions).map(record).find((c) => c.type === type)
  return found === undefined ? undefined : text(found.status)
}

const podReady = (pod: Json): string => {
  const containers = list(record(pod.spec).containers).length
  const statuses = list(record(pod.status).containerStatuses).map(record)
  // Without container statuses (no kubelet here), ContainersReady speaks for every container; it
  // is not Ready, which a readiness gate holds False while the containers are ready.
  const allReady = (conditionStatus(pod, "ContainersReady") ?? conditionStatus(pod, "Ready")) === "True"
  const ready = statuses.length > 0 ? statuses.filter((s) => s.ready === true).length : allReady ? containers : 0
  return `${ready}/${containers}`
}

/** `<true>/<gates>`: how many readiness gates have their condition True; `<none>` for a Pod without gates. */
const readinessGates = (pod: Json): string => {
  const gates = list(record(pod.spec).readinessGates).map((g) => text(record(g).conditionType))
  if (gates.length === 0) return "<none>"
  // The printer takes the first condition of each gate's type, as the API keeps one per type.
  return `${gates.filter((type) => conditionStatus(pod, type) === "True").length}/${gates.length}`
}

const podStatus = (pod: Json): string => {
  if (text(record(pod.metadata).deletionTimestamp) !== "") return "Terminating"
  const status = record(pod.status)
  return text(status.reason) || text(status.phase) || "Unknown"
}

const podColumns = (base: TableBase): ReadonlyArray<Column> => [
  base.name,
  column("Ready", "The aggregate readiness state of this pod for accepting traffic.", podReady),
  column("Status", "The aggregate status of the containers in this pod.", podStatus),
  column(
    "Restarts",
    "The number of times the containers in this pod have been restarted and when the last container in this pod has restarted.",
    (o) =>
      list(record(o.status).containerStatuses).reduce<number>(
        (n, s) => n + (typeof record(s).restartCount === "number" ? (record(s).restartCount as number) : 0),
        0
      )
  ),
  base.age,
  // The printer reads the first of podIPs, not podIP.
  column(
    "IP",
    "The IP address assigned to the pod",
    (o) => text(record(list(record(o.status).podIPs)[0]).ip) || "<none>",
    1
  ),
  column("Node", "The name of the node assigned to the pod", (o) => text(record(o.spec).nodeName) || "<none>", 1),
  column(
    "Nominated Node",
    "The name of the node nominated by the scheduler",
    (o) => text(record(o.status).nominatedNodeName) || "<none>",
    1
  ),
  column(
    "Readiness Gates",
    "The conditions besides its containers' readiness that the pod's readiness waits for",
    readinessGates,
    1
  )
]

/**
 * An Event's fields whichever API it comes from: the core/v1 names, else the
 * events.k8s.io/v1 ones.
 */
const eventFields = (o: Json) => {
  const involved = record(o.involvedObject ?? o.regarding)
  const series = record(o.series)
  const source = record(o.source ?? o.deprecatedSource)
  return {
    involved,
    message: text(o.message ?? o.note),
    count: typeof (o.count ?? o.deprecatedCount) === "number" ? (o.count ?? o.deprecatedCount) as number : 0,
    first: o.firstTimestamp ?? o.deprecatedFirstTimestamp ?? o.eventTime,
    // The newest of: the series' last observation, the last timestamp, the event time.
    last: series.lastObservedTime ?? o.lastTimestamp ?? o.deprecatedLastTimestamp ?? o.eventTime,
    source: text(source.component) || text(o.reportingComponent ?? o.reportingController)
  }
}

const eventColumns = (base: TableBase): ReadonlyArray<Column> => [
  column(
    "Last Seen",
    "Time when last event from this series was seen",
    (o, now) => base.since(eventFields(o).last, now)
  ),
  column("Type", "Type of this event", (o) => text(o.type)),
  column("Reason", "Reason is why the action was taken", (o) => text(o.reason)),
  column("Object", "The object that this event is about", (o) => {
    const { involved } = eventFields(o)
    return `${text(involved.kind).toLowerCase()}/${text(involved.name)}`
  }),
  column("Subobject", "The subobject that this event is about", (o) => text(eventFields(o).involved.fieldPath), 1),
  column("Source", "The source of this event", (o) => eventFields(o).source, 1),
  column("Message", "A human-readable description of the status of this operation", (o) => eventFields(o).message),
  column("First Seen", "Time when this event was first seen", (o, now) => base.since(eventFields(o).first, now), 1),
  column("Count", "Number of times this event has happened", (o) => eventFields(o).count, 1),
  { ...base.name, priority: 1 }
]

const MAX_SHOWN_ENDPOINTS = 3

const endpointSliceColumns = (base: TableBase): ReadonlyArray<Column> => [
  base.name,
  column("AddressType", "The type of addresses in this slice", (o) => text(o.addressType)),
  column("Ports", "Ports served by the endpoints in this slice", (o) => {
    const ports = list(o.ports).map((p) => record(p).port).filter((p): p is number => typeof p === "number")
    return ports.length === 0 ? "<unset>" : ports.join(",")
  }),
  column("Endpoints", "The addresses of the endpoints in this slice", (o) => {
    const addresses = list(o.endpoints).flatMap((e) => list(record(e).addresses).map(text))
    if (addresses.length === 0) return "<unset>"
    const shown = addresses.slice(0, MAX_SHOWN_ENDPOINTS).join(",")
    return addresses.length > MAX_SHOWN_ENDPOINTS
      ? `${shown} + ${addresses.length - MAX_SHOWN_ENDPOINTS} more...`
      : shown
  }),
  base.age
]

/** The columns of a workload type, or undefined for any other. */
export const workloadColumns = (group: string, kind: string, base: TableBase): ReadonlyArray<Column> | undefined => {
  if (group === "" && kind === "Pod") return podColumns(base)
  if ((group === "" || group === "events.k8s.io") && kind === "Event") return eventColumns(base)
  if (group === "discovery.k8s.io" && kind === "EndpointSlice") return endpointSliceColumns(base)
  return undefined
}
