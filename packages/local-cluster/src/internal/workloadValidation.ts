/**
 * What the API server refuses of Pods, Events and EndpointSlices, worded as it
 * words it (pkg/apis/core/validation for Pods and Events, pkg/apis/discovery for
 * EndpointSlices): names, required fields, enumerations, ports and addresses. The
 * checks cover the fields LocalCluster's users set, not every rule of the real types;
 * the value sets and bounds they check come from the types' one description.
 */
import type { KubeObject, ObjectMeta, Status } from "session-routing/kubernetes"
import { EventResource } from "../ServedResources.js"
import { invalidStatus } from "../Validation.js"
import { toCoreEvent } from "./eventViews.js"
import { child, duplicate, type FieldError, index, invalid, notSupported, required, tooMany } from "./fieldErrors.js"
import { jsonEqual } from "./json.js"
import { canonicalMicroTime } from "./microTime.js"
import {
  isDns1123Label,
  isDns1123Subdomain,
  isIPAddress,
  isQualifiedName,
  isValidPathSegmentName,
  isValidPortName,
  isValidPortNum
} from "./nameRules.js"
import {
  asArray,
  asNumber,
  asRecord,
  asString,
  isPresent,
  type JsonRecord,
  nameIsDnsSubdomain,
  validateObjectMeta
} from "./objectMeta.js"
import {
  ADDRESS_TYPES,
  DNS_POLICIES,
  EVENT_FIELD_LIMIT,
  EVENT_NOTE_LIMIT,
  MAX_ADDRESSES,
  MAX_ENDPOINTS,
  MAX_PORTS,
  PROTOCOLS,
  PULL_POLICIES,
  RESTART_POLICIES,
  TERMINATION_MESSAGE_POLICIES
} from "./workloadDescriptions.js"

const oneOf = (field: string, value: string, valid: ReadonlyArray<string>): Array<FieldError> =>
  value === "" || valid.includes(value) ? [] : [notSupported(field, value, valid)]

// ---------------------------------------------------------------------------
// Pods
// ---------------------------------------------------------------------------

const validateContainerPorts = (ports: ReadonlyArray<JsonRecord>, path: string): Array<FieldError> => {
  const errs: Array<FieldError> = []
  const names = new Set<string>()
  ports.forEach((port, i) => {
    const at = index(path, i)
    const name = asString(port.name)
    if (name !== "") {
      errs.push(...isValidPortName(name).map((m) => invalid(child(at, "name"), name, m)))
      if (names.has(name)) errs.push(duplicate(child(at, "name"), name))
      names.add(name)
    }
    const number = asNumber(port.containerPort)
    if (number === 0) errs.push(required(child(at, "containerPort")))
    else errs.push(...isValidPortNum(number).map((m) => invalid(child(at, "containerPort"), number, m)))
    if (isPresent(port.hostPort) && asNumber(port.hostPort) !== 0) {
      const host = asNumber(port.hostPort)
      errs.push(...isValidPortNum(host).map((m) => invalid(child(at, "hostPort"), host, m)))
    }
    const protocol = asString(port.protocol)
    if (protocol === "") errs.push(required(child(at, "protocol")))
    else errs.push(...oneOf(child(at, "protocol"), protocol, PROTOCOLS))
  })
  return errs
}

const validateContainers = (
  containers: ReadonlyArray<JsonRecord>,
  path: string,
  names: Set<string>
): Array<FieldError> => {
  const errs: Array<FieldError> = []
  containers.forEach((container, i) => {
    const at = index(path, i)
    const name = asString(container.name)
    if (name === "") errs.push(required(child(at, "name")))
    else errs.push(...isDns1123Label(name).map((m) => invalid(child(at, "name"), name, m)))
    if (name !== "" && names.has(name)) errs.push(duplicate(child(at, "name"), name))
    names.add(name)
    // The image may be left out only by a controller filling it in later; on create it is required.
    if (asString(container.image).trim() === "") errs.push(required(child(at, "image")))
    errs.push(...validateContainerPorts(asArray(container.ports).map(asRecord), child(at, "ports")))
    errs.push(...oneOf(child(at, "imagePullPolicy"), asString(container.imagePullPolicy), PULL_POLICIES))
    errs.push(
      ...oneOf(
        child(at, "terminationMessagePolicy"),
        asString(container.terminationMessagePolicy),
        TERMINATION_MESSAGE_POLICIES
      )
    )
  })
  return errs
}

/** `ValidatePodCreate`, for the spec fields LocalCluster models; the status, which create drops, is not checked. */
export const validatePod = (object: JsonRecord): Array<FieldError> => {
  const errs = validateObjectMeta(object.metadata as ObjectMeta | undefined, {
    namespaced: true,
    name: nameIsDnsSubdomain
  })
  const spec = asRecord(object.spec)
  const containers = asArray(spec.containers).map(asRecord)
  const names = new Set<string>()
  if (containers.length === 0) errs.push(required("spec.containers"))
  errs.push(...validateContainers(containers, "spec.containers", names))
  errs.push(...validateContainers(asArray(spec.initContainers).map(asRecord), "spec.initContainers", names))
  errs.push(...oneOf("spec.restartPolicy", asString(spec.restartPolicy), RESTART_POLICIES))
  errs.push(...oneOf("spec.dnsPolicy", asString(spec.dnsPolicy), DNS_POLICIES))
  const nodeName = asString(spec.nodeName)
  if (nodeName !== "") errs.push(...isDns1123Subdomain(nodeName).map((m) => invalid("spec.nodeName", nodeName, m)))
  // A gate names a condition type, which other writers set in the Pod's status: a qualified name.
  asArray(spec.readinessGates).map(asRecord).forEach((gate, i) => {
    const type = asString(gate.conditionType)
    const at = child(index("spec.readinessGates", i), "conditionType")
    errs.push(...isQualifiedName(type).map((m) => invalid(at, type, m)))
  })
  const status = asRecord(object.status)
  asArray(status.podIPs).map(asRecord).forEach((entry, i) => {
    const ip = asString(entry.ip)
    if (!isIPAddress(ip)) errs.push(invalid(child(index("status.podIPs", i), "ip"), ip, "must be a valid IP address"))
  })
  asArray(status.conditions).map(asRecord).forEach((condition, i) => {
    const type = asString(condition.type)
    errs.push(...isQualifiedName(type).map((m) => invalid(child(index("status.conditions", i), "type"), type, m)))
  })
  return errs
}

// ---------------------------------------------------------------------------
// Events
// ---------------------------------------------------------------------------

const atMost = (field: string, value: string, limit: number): Array<FieldError> =>
  value.length > limit ? [invalid(field, "", `can have at most ${limit} characters`)] : []

/**
 * `legacyValidateEvent`, which every Event passes: the involved object's namespace
 * agrees with the Event's, and an Event with an `eventTime` (the newer kind) names
 * its reporting controller, instance, action and reason. Names are not checked
 * beyond what a URL path allows, for old clients' sake.
 */
export const validateEvent = (object: JsonRecord): Array<FieldError> => {
  const errs: Array<FieldError> = []
  const meta = asRecord(object.metadata)
  const name = asString(meta.name)
  const namespace = asString(meta.namespace)
  if (name === "" && asString(meta.generateName) === "") {
    errs.push(required("metadata.name", "name or generateName is required"))
  } else errs.push(...isValidPathSegmentName(name).map((m) => invalid("metadata.name", name, m)))
  const involvedNamespace = asString(asRecord(object.involvedObject).namespace)
  const mismatch = invalid("involvedObject.namespace", involvedNamespace, "does not match event.namespace")
  if (!isPresent(object.eventTime)) {
    if (involvedNamespace === "" ? namespace !== "" && namespace !== "default" : namespace !== involvedNamespace) {
      errs.push(mismatch)
    }
  } else {
    if (involvedNamespace === "" && namespace !== "default" && namespace !== "kube-system") errs.push(mismatch)
    const controller = asString(object.reportingComponent)
    if (controller === "") errs.push(required("reportingController"))
    errs.push(...isQualifiedName(controller).map((m) => invalid("reportingController", controller, m)))
    const instance = asString(object.reportingInstance)
    if (instance === "") errs.push(required("reportingInstance"))
    errs.push(...atMost("reportingInstance", instance, EVENT_FIELD_LIMIT))
    const action = asString(object.action)
    if (action === "") errs.push(required("action"))
    errs.push(...atMost("action", action, EVENT_FIELD_LIMIT))
    const reason = asString(object.reason)
    if (reason === "") errs.push(required("reason"))
    errs.push(...atMost("reason", reason, EVENT_FIELD_LIMIT))
    errs.push(...atMost("message", asString(object.message), EVENT_NOTE_LIMIT))
  }
  errs.push(...isDns1123Subdomain(namespace).map((m) => invalid("namespace", namespace, m)))
  return errs
}

/**
 * The stricter checks of a create through events.k8s.io/v1, on top of the legacy
 * ones: a proper name, an `eventTime`, a type, a valid series, and none of the
 * core-only counters and timestamps. Undefined when the Event may be created.
 */
export const admitEventV1Create = (object: KubeObject, namespace: string | undefined): Status | undefined => {
  const core = toCoreEvent(object) as unknown as JsonRecord
  const meta = asRecord(core.metadata)
  const filled: JsonRecord = {
    ...core,
    metadata: { ...meta, ...(namespace !== undefined && asString(meta.namespace) === "" ? { namespace } : {}) }
  }
  const errs = validateEvent(filled)
  errs.push(...validateObjectMeta(filled.metadata as ObjectMeta, { namespaced: true, name: nameIsDnsSubdomain }))
  const series = core.series
  if (isPresent(series)) {
    const s = asRecord(series)
    if (asNumber(s.count) < 2) errs.push(invalid("series.count", "", "should be at least 2"))
    if (!isPresent(s.lastObservedTime)) errs.push(required("series.lastObservedTime"))
  }
  if (!isPresent(core.eventTime)) errs.push(required("eventTime"))
  const type = asString(core.type)
  if (type !== "Normal" && type !== "Warning") errs.push(invalid("type", "", `has invalid value: ${type}`))
  if (isPresent(core.firstTimestamp)) errs.push(invalid("firstTimestamp", "", "needs to be unset"))
  if (isPresent(core.lastTimestamp)) errs.push(invalid("lastTimestamp", "", "needs to be unset"))
  if (asNumber(core.count) !== 0) errs.push(invalid("count", "", "needs to be unset"))
  const source = asRecord(core.source)
  if (asString(source.component) !== "" || asString(source.host) !== "") {
    errs.push(invalid("source", "", "needs to be unset"))
  }
  return errs.length === 0 ? undefined : invalidStatus(EventResource, asString(meta.name), errs)
}

/** `validateV1EventSeries`: a series counts from 2 and says when it was last seen. */
const seriesErrors = (core: JsonRecord): Array<FieldError> => {
  if (!isPresent(core.series)) return []
  const series = asRecord(core.series)
  const errs: Array<FieldError> = []
  if (asNumber(series.count) < 2) errs.push(invalid("series.count", "", "should be at least 2"))
  if (!isPresent(series.lastObservedTime)) errs.push(required("series.lastObservedTime"))
  return errs
}

/** An ObjectReference as `field.Invalid` prints the internal Go struct: JSON, every field, Go's names. */
const goReference = (value: unknown): unknown => {
  if (!isPresent(value)) return null
  const r = asRecord(value)
  return {
    Kind: asString(r.kind),
    Namespace: asString(r.namespace),
    Name: asString(r.name),
    UID: asString(r.uid),
    APIVersion: asString(r.apiVersion),
    ResourceVersion: asString(r.resourceVersion),
    FieldPath: asString(r.fieldPath)
  }
}

/** A `metav1.Time` as JSON: null when unset. */
const goTime = (value: unknown): unknown => (isPresent(value) && asString(value) !== "" ? asString(value) : null)

/**
 * An `eventTime` as compared and printed: truncated to microseconds in UTC, a Go
 * `time.Time` in JSON (RFC 3339 with its fraction's trailing zeros dropped).
 */
const goEventTime = (value: unknown): string => {
  const text = asString(value)
  if (text === "") return "0001-01-01T00:00:00Z"
  return canonicalMicroTime(text).replace(/\.?0+Z$/, "Z")
}

/**
 * `ValidateEventUpdate` for a write through events.k8s.io/v1 (a write through core/v1
 * takes the legacy checks only): a changed series is checked, and everything else an
 * Event says is immutable, so a repeat may move `series` and nothing more. `live` and
 * `next` are in the core/v1 form the store keeps.
 */
export const eventV1UpdateErrors = (live: KubeObject, next: KubeObject): Array<FieldError> => {
  const before = live as unknown as JsonRecord
  const after = next as unknown as JsonRecord
  const errs = jsonEqual(before.series ?? null, after.series ?? null) ? [] : seriesErrors(after)
  const source = (e: JsonRecord) => ({
    Component: asString(asRecord(e.source).component),
    Host: asString(asRecord(e.source).host)
  })
  // In the server's order; it checks `reason` twice, and reports it twice.
  const fields: ReadonlyArray<readonly [string, (e: JsonRecord) => unknown]> = [
    ["involvedObject", (e) => goReference(e.involvedObject)],
    ["reason", (e) => asString(e.reason)],
    ["message", (e) => asString(e.message)],
    ["source", source],
    ["firstTimestamp", (e) => goTime(e.firstTimestamp)],
    ["lastTimestamp", (e) => goTime(e.lastTimestamp)],
    ["count", (e) => asNumber(e.count)],
    ["reason", (e) => asString(e.reason)],
    ["type", (e) => asString(e.type)],
    ["eventTime", (e) => goEventTime(e.eventTime)],
    ["action", (e) => asString(e.action)],
    ["related", (e) => goReference(e.related)],
    ["reportingController", (e) => asString(e.reportingComponent)],
    ["reportingInstance", (e) => asString(e.reportingInstance)]
  ]
  for (const [field, read] of fields) {
    const value = read(after)
    if (!jsonEqual(read(before), value)) errs.push(invalid(field, value, "field is immutable"))
  }
  return errs
}

// ---------------------------------------------------------------------------
// EndpointSlices
// ---------------------------------------------------------------------------

const validateAddress = (addressType: string, address: string, path: string): Array<FieldError> => {
  if (addressType === "FQDN") return isDns1123Subdomain(address).map((m) => invalid(path, address, m))
  const v6 = address.includes(":")
  if (!isIPAddress(address) || (addressType === "IPv4") === v6) {
    return [invalid(path, address, `must be a valid ${addressType === "IPv4" ? "IPv4" : "IPv6"} address`)]
  }
  return []
}

/** `ValidateEndpointSliceCreate`: address type, endpoints and their addresses, ports. */
export const validateEndpointSlice = (object: JsonRecord): Array<FieldError> => {
  const errs = validateObjectMeta(object.metadata as ObjectMeta | undefined, {
    namespaced: true,
    name: nameIsDnsSubdomain
  })
  const addressType = asString(object.addressType)
  if (addressType === "") errs.push(required("addressType"))
  else errs.push(...oneOf("addressType", addressType, ADDRESS_TYPES))
  const endpoints = asArray(object.endpoints).map(asRecord)
  if (endpoints.length > MAX_ENDPOINTS) errs.push(tooMany("endpoints", endpoints.length, MAX_ENDPOINTS))
  endpoints.forEach((endpoint, i) => {
    const at = index("endpoints", i)
    const addresses = asArray(endpoint.addresses).map(asString)
    if (addresses.length === 0) errs.push(required(child(at, "addresses"), "must contain at least 1 address"))
    else if (addresses.length > MAX_ADDRESSES) {
      errs.push(tooMany(child(at, "addresses"), addresses.length, MAX_ADDRESSES))
    }
    if ((ADDRESS_TYPES as ReadonlyArray<string>).includes(addressType)) {
      addresses.forEach((address, j) =>
        errs.push(...validateAddress(addressType, address, index(child(at, "addresses"), j)))
      )
    }
    const nodeName = asString(endpoint.nodeName)
    if (nodeName !== "") {
      errs.push(...isDns1123Subdomain(nodeName).map((m) => invalid(child(at, "nodeName"), nodeName, m)))
    }
  })
  const ports = asArray(object.ports).map(asRecord)
  if (ports.length > MAX_PORTS) errs.push(tooMany("ports", ports.length, MAX_PORTS))
  const names = new Set<string>()
  ports.forEach((port, i) => {
    const at = index("ports", i)
    const name = asString(port.name)
    if (name !== "") errs.push(...isDns1123Label(name).map((m) => invalid(child(at, "name"), name, m)))
    if (names.has(name)) errs.push(duplicate(child(at, "name"), name))
    names.add(name)
    if (isPresent(port.port)) {
      const number = asNumber(port.port)
      if (number !== 0) errs.push(...isValidPortNum(number).map((m) => invalid(child(at, "port"), number, m)))
    }
    const protocol = asString(port.protocol)
    if (protocol === "") errs.push(required(child(at, "protocol")))
    else errs.push(...oneOf(child(at, "protocol"), protocol, PROTOCOLS))
  })
  return errs
}

// ---------------------------------------------------------------------------
// Updates
// ---------------------------------------------------------------------------

const POD_UPDATE_RULE =
  "pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)"

const defined = (record: JsonRecord): JsonRecord =>
  Object.fromEntries(Object.entries(record).filter(([, v]) => v !== undefined))

// The parts of a Pod spec an update may change, taken from `from` so that only the rest is compared.
const withMutableFrom = (spec: JsonRecord, from: JsonRecord): JsonRecord => {
  const images = (key: string) =>
    asArray(spec[key]).map((c, i) => ({ ...asRecord(c), image: asRecord(asArray(from[key])[i]).image }))
  return {
    ...spec,
    containers: images("containers"),
    initContainers: images("initContainers"),
    activeDeadlineSeconds: from.activeDeadlineSeconds,
    tolerations: from.tolerations,
    terminationGracePeriodSeconds: from.terminationGracePeriodSeconds
  }
}

/**
 * What an update may not change, beyond what every write checks: a Pod's spec
 * except images, deadlines and tolerations (`ValidatePodUpdate`); an EndpointSlice's
 * address type. Compared as stored, defaults filled in.
 */
export const workloadUpdateErrors = (
  group: string,
  kind: string,
  live: KubeObject,
  next: KubeObject
): Array<FieldError> => {
  const before = live as unknown as JsonRecord
  const after = next as unknown as JsonRecord
  if (group === "" && kind === "Pod") {
    const was = asRecord(before.spec)
    const same = jsonEqual(defined(withMutableFrom(asRecord(after.spec), was)), defined(withMutableFrom(was, was)))
    return same ? [] : [{ reason: "FieldValueForbidden", field: "spec", message: `Forbidden: ${POD_UPDATE_RULE}` }]
  }
  if (group === "discovery.k8s.io" && kind === "EndpointSlice" && before.addressType !== after.addressType) {
    return [invalid("addressType", after.addressType, "field is immutable")]
  }
  return []
}

/** The field errors of a workload type, or undefined for a type this module does not describe. */
export const validateWorkload = (
  group: string,
  kind: string,
  object: JsonRecord
): ReadonlyArray<FieldError> | undefined => {
  if (group === "" && kind === "Pod") return validatePod(object)
  if (group === "" && kind === "Event") return validateEvent(object)
  if (group === "discovery.k8s.io" && kind === "EndpointSlice") return validateEndpointSlice(object)
  return undefined
}
