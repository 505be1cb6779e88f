/**
 * The built-in types' validators, as pkg/apis/core/validation and
 * pkg/apis/networking/validation write them: Namespace, Service, Ingress, IngressClass.
 * The value sets and bounds they check for Ingress and IngressClass come from those
 * types' one description (`ingressDescriptions.ts`).
 */
import type { ObjectMeta } from "session-routing/kubernetes"
import {
  child,
  duplicate,
  type FieldError,
  forbidden,
  index,
  invalid,
  notSupported,
  required,
  tooLong
} from "./fieldErrors.js"
import { CONTROLLER_MAX_LENGTH, PARAMETER_SCOPES, PATH_TYPES } from "./ingressDescriptions.js"
import {
  byteLength,
  HTTP_PATH,
  HTTP_PATH_FMT,
  isDns1035Label,
  isDns1123Label,
  isDns1123Subdomain,
  isIPAddress,
  isQualifiedName,
  isValidPathSegmentName,
  isValidPortName,
  isValidPortNum,
  isWildcardDns1123Subdomain,
  regexError
} from "./nameRules.js"
import {
  asArray,
  asNumber,
  asRecord,
  asString,
  isPresent,
  isRecord,
  type JsonRecord,
  nameIsDns1035Label,
  nameIsDnsLabel,
  nameIsDnsSubdomain,
  validateLabels,
  validateObjectMeta
} from "./objectMeta.js"

// ---------------------------------------------------------------------------
// Namespace, Service (pkg/apis/core/validation)
// ---------------------------------------------------------------------------

/** A Namespace's name is a DNS label; its `spec.finalizers` are not checked here. */
export const validateNamespace = (object: JsonRecord): Array<FieldError> =>
  validateObjectMeta(object.metadata as ObjectMeta | undefined, { namespaced: false, name: nameIsDnsLabel })

export const SERVICE_TYPES = ["ClusterIP", "ExternalName", "LoadBalancer", "NodePort"] as const
export const PORT_PROTOCOLS = ["SCTP", "TCP", "UDP"] as const

export const validateServicePort = (
  port: JsonRecord,
  requireName: boolean,
  names: Set<string>,
  path: string
): Array<FieldError> => {
  const errs: Array<FieldError> = []
  const name = asString(port.name)
  if (requireName && name === "") {
    errs.push(required(child(path, "name")))
  } else if (name !== "") {
    // Service port names are DNS labels; only container and target port names follow the IANA rules.
    errs.push(...isDns1123Label(name).map((m) => invalid(child(path, "name"), name, m)))
    if (names.has(name)) errs.push(duplicate(child(path, "name"), name))
    else names.add(name)
  }
  const number = asNumber(port.port)
  errs.push(...isValidPortNum(number).map((m) => invalid(child(path, "port"), number, m)))
  const protocol = asString(port.protocol) || "TCP" // defaulted before validation
  if (!(PORT_PROTOCOLS as ReadonlyArray<string>).includes(protocol)) {
    errs.push(notSupported(child(path, "protocol"), protocol, PORT_PROTOCOLS))
  }
  // An unset (or zero, or empty) targetPort is defaulted to the port, so a bad port is reported twice.
  const unset = !isPresent(port.targetPort) || port.targetPort === 0 || port.targetPort === ""
  const target = unset ? number : port.targetPort
  if (typeof target === "string") {
    errs.push(...isValidPortName(target).map((m) => invalid(child(path, "targetPort"), target, m)))
  } else {
    const n = asNumber(target)
    errs.push(...isValidPortNum(n).map((m) => invalid(child(path, "targetPort"), n, m)))
  }
  if (typeof port.appProtocol === "string") {
    const appProtocol = port.appProtocol
    errs.push(...isQualifiedName(appProtocol).map((m) => invalid(child(path, "appProtocol"), appProtocol, m)))
  }
  return errs
}

export const validateService = (object: JsonRecord): Array<FieldError> => {
  const errs = validateObjectMeta(object.metadata as ObjectMeta | undefined, {
    namespaced: true,
    name: nameIsDns1035Label
  })
  const spec = asRecord(object.spec)
  const type = asString(spec.type) || "ClusterIP" // defaulted before validation
  const ports = asArray(spec.ports).map(asRecord)
  const headless = type === "ClusterIP" && asString(spec.clusterIP) === "None"
  if (ports.length === 0 && !headless && type !== "ExternalName") errs.push(required("spec.ports"))
  if (type === "ExternalName") {
    // The name may end with a dot to say it is fully qualified.
    const cname = asString(spec.externalName).replace(/\.$/, "")
    if (cname === "") errs.push(required("spec.externalName"))
    else errs.push(...isDns1123Subdomain(cname).map((m) => invalid("spec.externalName", cname, m)))
  }
  const names = new Set<string>()
  ports.forEach((port, i) => errs.push(...validateServicePort(port, ports.length > 1, names, index("spec.ports", i))))
  if (isRecord(spec.selector)) errs.push(...validateLabels(spec.selector, "spec.selector"))
  if (!(SERVICE_TYPES as ReadonlyArray<string>).includes(type)) {
    errs.push(notSupported("spec.type", type, SERVICE_TYPES))
  }
  const seen = new Set<string>()
  ports.forEach((port, i) => {
    const protocol = asString(port.protocol) || "TCP"
    const number = asNumber(port.port)
    const key = `${protocol}/${number}`
    if (seen.has(key)) {
      // The server compares (protocol, port) as a ServicePort struct and prints that struct.
      errs.push(
        duplicate(index("spec.ports", i), {
          Name: "",
          Protocol: protocol,
          AppProtocol: null,
          Port: number,
          TargetPort: 0,
          NodePort: 0
        })
      )
    }
    seen.add(key)
  })
  return errs
}

// ---------------------------------------------------------------------------
// Ingress, IngressClass (pkg/apis/networking/validation)
// ---------------------------------------------------------------------------

export const INVALID_PATH_SEQUENCES = ["//", "/./", "/../", "%2f", "%2F"] as const
export const INVALID_PATH_SUFFIXES = ["/..", "/."] as const
export const INGRESS_CLASS_ANNOTATION = "kubernetes.io/ingress.class"

/** A host or TLS host: a DNS subdomain, or a wildcard that is exactly `*.` and a subdomain. */
export const hostMessages = (host: string): ReadonlyArray<string> =>
  host.includes("*") ? isWildcardDns1123Subdomain(host) : isDns1123Subdomain(host)

export const validateTypedLocalObjectReference = (ref: JsonRecord, path: string): Array<FieldError> => {
  const errs: Array<FieldError> = []
  if (typeof ref.apiGroup === "string") {
    const group = ref.apiGroup
    errs.push(...isDns1123Subdomain(group).map((m) => invalid(child(path, "apiGroup"), group, m)))
  }
  for (const key of ["kind", "name"] as const) {
    const value = asString(ref[key])
    if (value === "") errs.push(required(child(path, key), `${key} is required`))
    else errs.push(...isValidPathSegmentName(value).map((m) => invalid(child(path, key), value, m)))
  }
  return errs
}

export const validateIngressBackend = (backend: JsonRecord, path: string): Array<FieldError> => {
  const hasResource = isPresent(backend.resource)
  const hasService = isPresent(backend.service)
  if (hasResource && hasService) return [invalid(path, "", "cannot set both resource and service backends")]
  if (hasResource) return validateTypedLocalObjectReference(asRecord(backend.resource), child(path, "resource"))
  if (!hasService) return [invalid(path, "", "resource or service backend is required")]
  const errs: Array<FieldError> = []
  const service = asRecord(backend.service)
  const name = asString(service.name)
  if (name === "") errs.push(required(child(path, "service.name")))
  else errs.push(...isDns1035Label(name).map((m) => invalid(child(path, "service.name"), name, m)))
  const port = asRecord(service.port)
  const portName = asString(port.name)
  const portNumber = asNumber(port.number)
  if (portName !== "" && portNumber !== 0) {
    errs.push(invalid(path, "", "cannot set both port name & port number"))
  } else if (portName !== "") {
    errs.push(...isValidPortName(portName).map((m) => invalid(child(path, "service.port.name"), portName, m)))
  } else if (portNumber !== 0) {
    errs.push(...isValidPortNum(portNumber).map((m) => invalid(child(path, "service.port.number"), portNumber, m)))
  } else {
    errs.push(required(path, "port name or number is required"))
  }
  return errs
}

export const validateIngressPath = (entry: JsonRecord, path: string): Array<FieldError> => {
  // Without a pathType the server stops here: the backend is not checked.
  if (!isPresent(entry.pathType)) return [required(child(path, "pathType"), "pathType must be specified")]
  const errs: Array<FieldError> = []
  const pathType = asString(entry.pathType)
  const value = asString(entry.path)
  const at = child(path, "path")
  switch (pathType) {
    case "Exact":
    case "Prefix":
      if (!value.startsWith("/")) errs.push(invalid(at, value, "must be an absolute path"))
      if (value.length > 0) {
        for (const seq of INVALID_PATH_SEQUENCES) {
          if (value.includes(seq)) errs.push(invalid(at, value, `must not contain '${seq}'`))
        }
        for (const suffix of INVALID_PATH_SUFFIXES) {
          if (value.endsWith(suffix)) errs.push(invalid(at, value, `cannot end with '${suffix}'`))
        }
      }
      break
    case "ImplementationSpecific":
      if (value.length > 0 && !value.startsWith("/")) errs.push(invalid(at, value, "must be an absolute path"))
      break
    default:
      errs.push(notSupported(child(path, "pathType"), pathType, PATH_TYPES))
  }
  errs.push(...validateIngressBackend(asRecord(entry.backend), child(path, "backend")))
  return errs
}

export const validateIngress = (object: JsonRecord): Array<FieldError> => {
  const errs = validateObjectMeta(object.metadata as ObjectMeta | undefined, {
    namespaced: true,
    name: nameIsDnsSubdomain
  })
  const spec = asRecord(object.spec)
  const rules = asArray(spec.rules).map(asRecord)
  if (rules.length === 0 && !isPresent(spec.defaultBackend)) {
    errs.push(
      invalid("spec", Array.isArray(spec.rules) ? [] : null, "either `defaultBackend` or `rules` must be specified")
    )
  }
  if (isPresent(spec.defaultBackend)) {
    errs.push(...validateIngressBackend(asRecord(spec.defaultBackend), "spec.defaultBackend"))
  }
  rules.forEach((rule, i) => {
    const at = index("spec.rules", i)
    const host = asString(rule.host)
    if (host !== "") {
      if (isIPAddress(host)) errs.push(invalid(child(at, "host"), host, "must be a DNS name, not an IP address"))
      errs.push(...hostMessages(host).map((m) => invalid(child(at, "host"), host, m)))
    }
    // A rule without `http` is allowed (a host with no paths); with it, paths are required.
    if (isPresent(rule.http)) {
      const paths = asArray(asRecord(rule.http).paths).map(asRecord)
      if (paths.length === 0) errs.push(required(child(at, "http.paths")))
      paths.forEach((entry, j) => errs.push(...validateIngressPath(entry, index(child(at, "http.paths"), j))))
    }
  })
  asArray(spec.tls).map(asRecord).forEach((tls, i) => {
    const at = index("spec.tls", i)
    asArray(tls.hosts).forEach((h, j) => {
      const host = asString(h)
      errs.push(...hostMessages(host).map((m) => invalid(index(child(at, "hosts"), j), host, m)))
    })
    const secretName = asString(tls.secretName)
    if (secretName !== "") {
      errs.push(...isDns1123Subdomain(secretName).map((m) => invalid(child(at, "secretName"), secretName, m)))
    }
  })
  if (typeof spec.ingressClassName === "string") {
    const className = spec.ingressClassName
    errs.push(...nameIsDnsSubdomain(className, false).map((m) => invalid("spec.ingressClassName", className, m)))
  }
  const annotations = asRecord(asRecord(object.metadata).annotations)
  const annotated = annotations[INGRESS_CLASS_ANNOTATION]
  if (
    typeof annotated === "string" && typeof spec.ingressClassName === "string" && annotated !== spec.ingressClassName
  ) {
    // The server names this field without `metadata.`, as it does.
    errs.push(
      invalid(
        `annotations.${INGRESS_CLASS_ANNOTATION}`,
        annotated,
        "must match `ingressClassName` when both are specified"
      )
    )
  }
  return errs
}

/** `IsDomainPrefixedPath`: `acme.io/foo`, as an IngressClass controller is named. */
export const validateDomainPrefixedPath = (value: string, path: string): Array<FieldError> => {
  if (value === "") return [required(path)]
  const slash = value.indexOf("/")
  const host = slash < 0 ? value : value.slice(0, slash)
  const rest = slash < 0 ? "" : value.slice(slash + 1)
  if (slash < 0 || host === "" || rest === "") {
    return [invalid(path, value, "must be a domain-prefixed path (such as \"acme.io/foo\")")]
  }
  const errs = isDns1123Subdomain(host).map((m) => invalid(path, host, m))
  if (!HTTP_PATH.test(rest)) errs.push(invalid(path, rest, regexError("Invalid path", HTTP_PATH_FMT)))
  return errs
}

export const validateIngressClass = (object: JsonRecord): Array<FieldError> => {
  const errs = validateObjectMeta(object.metadata as ObjectMeta | undefined, {
    namespaced: false,
    name: nameIsDnsSubdomain
  })
  const spec = asRecord(object.spec)
  const controller = asString(spec.controller)
  if (byteLength(controller) > CONTROLLER_MAX_LENGTH) errs.push(tooLong("spec.controller", CONTROLLER_MAX_LENGTH))
  errs.push(...validateDomainPrefixedPath(controller, "spec.controller"))
  if (isRecord(spec.parameters)) {
    const params = spec.parameters
    errs.push(...validateTypedLocalObjectReference(params, "spec.parameters"))
    const scope = typeof params.scope === "string" ? params.scope : "Cluster" // defaulted before validation
    if (!(PARAMETER_SCOPES as ReadonlyArray<string>).includes(scope)) {
      errs.push(notSupported("spec.parameters.scope", scope, PARAMETER_SCOPES))
    } else if (scope === "Namespace") {
      if (typeof params.namespace !== "string") {
        errs.push(required("spec.parameters.namespace", "`parameters.scope` is set to 'Namespace'"))
      } else {
        const ns = params.namespace
        errs.push(...nameIsDnsLabel(ns, false).map((m) => invalid("spec.parameters.namespace", ns, m)))
      }
    } else if (isPresent(params.namespace)) {
      errs.push(forbidden("spec.parameters.namespace", "`parameters.scope` is set to 'Cluster'"))
    }
  }
  return errs
}
