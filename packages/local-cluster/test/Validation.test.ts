/**
 * The API server's validation, as `validateObject` reproduces it: objects a real
 * server accepts pass, and objects it refuses (most of which our builders never
 * produce) are refused with the server's field path, reason and wording.
 */
import { describe, expect, it } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import { type KubeObject, type ResourceType } from "session-routing/kubernetes"
import {
  GatewayResource,
  HttpRouteResource,
  IngressClassResource,
  IngressResource,
  LeaseResource,
  NamespaceResource,
  ServiceResource
} from "../src/ServedResources.js"
import { type FieldError, goQuote, invalidStatus, validateObject, withSchemaDefaults } from "../src/Validation.js"

// ---------------------------------------------------------------------------
// Objects a real server accepts
// ---------------------------------------------------------------------------

const owner = { apiVersion: "v1", kind: "Pod", name: "pod", uid: "uid", controller: true, blockOwnerDeletion: true }
const labels = { "app.kubernetes.io/managed-by": "telo-k8s-runner", "telo.run/session-id": "abc" }
const meta = (name: string) => ({ name, namespace: "telo-sessions", labels, ownerReferences: [owner] })

const service = {
  apiVersion: "v1",
  kind: "Service",
  metadata: meta("telo-run-abc"),
  spec: {
    type: "ClusterIP",
    selector: { "telo.run/session-id": "abc" },
    ports: [
      { name: "p8080", port: 8080, targetPort: 8080, protocol: "TCP" },
      { name: "p5000", port: 5000, targetPort: 5000, protocol: "UDP" }
    ]
  }
}

const ingress = {
  apiVersion: "networking.k8s.io/v1",
  kind: "Ingress",
  metadata: meta("telo-run-abc"),
  spec: {
    ingressClassName: "nginx",
    tls: [{ hosts: ["8080-abc.telo.run", "*.telo.run"], secretName: "telo-origin-tls" }],
    rules: [
      {
        host: "8080-abc.telo.run",
        http: {
          paths: [{
            path: "/",
            pathType: "Prefix",
            backend: { service: { name: "telo-run-abc", port: { number: 8080 } } }
          }]
        }
      }
    ]
  }
}

const httpRoute = {
  apiVersion: "gateway.networking.k8s.io/v1",
  kind: "HTTPRoute",
  metadata: meta("telo-run-abc-8080"),
  spec: {
    parentRefs: [{
      group: "gateway.networking.k8s.io",
      kind: "Gateway",
      namespace: "gw",
      name: "gw",
      sectionName: "https"
    }],
    hostnames: ["8080-abc.telo.run"],
    rules: [{
      matches: [{ path: { type: "PathPrefix", value: "/" } }],
      backendRefs: [{ name: "telo-run-abc", port: 8080 }]
    }]
  }
}

const gateway = {
  apiVersion: "gateway.networking.k8s.io/v1",
  kind: "Gateway",
  metadata: { name: "gw", namespace: "gw" },
  spec: {
    gatewayClassName: "example",
    listeners: [
      { name: "https", hostname: "*.telo.run", port: 443, protocol: "HTTPS" },
      { name: "http", port: 80, protocol: "HTTP", allowedRoutes: { namespaces: { from: "All" } } }
    ]
  }
}

const ingressClass = {
  apiVersion: "networking.k8s.io/v1",
  kind: "IngressClass",
  metadata: { name: "nginx" },
  spec: { controller: "k8s.io/ingress-nginx" }
}

const namespace = { apiVersion: "v1", kind: "Namespace", metadata: { name: "telo-sessions" } }

// ---------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------

type Path = string | ReadonlyArray<string | number>

/** A copy of `base` with the value at `path` replaced (or removed, for `undefined`). */
const edit = <A>(base: A, path: Path, value: unknown): A => {
  const copy = structuredClone(base) as Record<string | number, any>
  const keys = typeof path === "string" ? path.replace(/\[(\d+)\]/g, ".$1").split(".") : path
  let node = copy
  for (const key of keys.slice(0, -1)) node = node[key]
  const last = keys[keys.length - 1] as string | number
  if (value === undefined) delete node[last]
  else node[last] = value
  return copy as A
}

const repeat = <A>(n: number, f: (i: number) => A): Array<A> => Array.from({ length: n }, (_, i) => f(i))

const RFC1123_SUBDOMAIN =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
const RFC1123_LABEL =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
const DNS1035_LABEL =
  "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"
const WILDCARD =
  "a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS subdomain, which must consist of lower case alphanumeric characters, '-' or '.' and end with an alphanumeric character (e.g. '*.example.com', regex used for validation is '\\*\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
const HOSTNAME_PATTERN = "^(\\*\\.)?[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
const CEL_SKIPPED: FieldError = {
  reason: "FieldValueInvalid",
  field: "<nil>",
  message:
    "Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation"
}

// ---------------------------------------------------------------------------

describe("validateObject accepts what a real server accepts", () => {
  it.each(
    [
      ["a ClusterIP Service with named tcp and udp ports", ServiceResource, service],
      ["a Service with one unnamed port", ServiceResource, edit(service, "spec.ports", [{ port: 80 }])],
      ["a headless Service without ports", ServiceResource, edit(service, "spec", { clusterIP: "None" })],
      [
        "an ExternalName Service with a trailing dot",
        ServiceResource,
        edit(service, "spec", { type: "ExternalName", externalName: "db.example.com." })
      ],
      // Service port names are DNS labels, not IANA service names: 16 characters is fine here.
      [
        "a Service port name longer than an IANA name",
        ServiceResource,
        edit(service, "spec.ports[0].name", "a-sixteen-chars1")
      ],
      ["a Service with a named targetPort", ServiceResource, edit(service, "spec.ports[0].targetPort", "http")],
      ["an Ingress with class, tls (incl. a wildcard host) and a Prefix rule", IngressResource, ingress],
      [
        "an Ingress with only a default backend",
        IngressResource,
        edit(ingress, "spec", { defaultBackend: { service: { name: "web", port: { name: "http" } } } })
      ],
      [
        "an Ingress rule with a resource backend",
        IngressResource,
        edit(ingress, "spec.rules[0].http.paths[0].backend", {
          resource: { apiGroup: "k8s.example.com", kind: "StorageBucket", name: "static" }
        })
      ],
      ["an Ingress with a wildcard host", IngressResource, edit(ingress, "spec.rules[0].host", "*.telo.run")],
      ["an Ingress rule without a host", IngressResource, edit(ingress, "spec.rules[0].host", undefined)],
      ["an Ingress rule with no http block", IngressResource, edit(ingress, "spec.rules[0].http", undefined)],
      [
        "an ImplementationSpecific path that is empty",
        IngressResource,
        edit(ingress, "spec.rules[0].http.paths[0]", {
          pathType: "ImplementationSpecific",
          backend: { service: { name: "web", port: { number: 80 } } }
        })
      ],
      // The apiserver checks the whole host (≤253), not each label (≤63); DNS and certificates do.
      [
        "an Ingress host with a 64-character label",
        IngressResource,
        edit(ingress, "spec.rules[0].host", `${"a".repeat(64)}.telo.run`)
      ],
      ["an HTTPRoute as the builders make it", HttpRouteResource, httpRoute],
      [
        "an HTTPRoute that leaves every defaulted field out",
        HttpRouteResource,
        edit(httpRoute, "spec", { parentRefs: [{ name: "gw" }], rules: [{ backendRefs: [{ name: "svc", port: 80 }] }] })
      ],
      [
        "an HTTPRoute backendRef to a non-Service kind without a port",
        HttpRouteResource,
        edit(httpRoute, "spec.rules[0].backendRefs[0]", {
          group: "multicluster.x-k8s.io",
          kind: "ServiceImport",
          name: "svc"
        })
      ],
      [
        "a RegularExpression path the PathPrefix rules do not apply to",
        HttpRouteResource,
        edit(httpRoute, "spec.rules[0].matches[0].path", { type: "RegularExpression", value: "foo//.*" })
      ],
      [
        "two parentRefs to one Gateway with distinct sectionNames",
        HttpRouteResource,
        edit(httpRoute, "spec.parentRefs", [{ name: "gw", sectionName: "a" }, { name: "gw", sectionName: "b" }])
      ],
      ["16 hostnames", HttpRouteResource, edit(httpRoute, "spec.hostnames", repeat(16, (i) => `h${i}.telo.run`))],
      // The CRD pattern cannot tell an IP from a name: the Gateway API says "no IPs", the schema lets them in.
      [
        "an HTTPRoute hostname that is an IPv4 address",
        HttpRouteResource,
        edit(httpRoute, "spec.hostnames", ["10.0.0.1"])
      ],
      ["a Gateway with two listeners", GatewayResource, gateway],
      ["an IngressClass", IngressClassResource, ingressClass],
      [
        "an IngressClass with namespaced parameters",
        IngressClassResource,
        edit(ingressClass, "spec.parameters", {
          apiGroup: "k8s.example.com",
          kind: "Params",
          name: "p",
          scope: "Namespace",
          namespace: "ns"
        })
      ],
      ["a Namespace", NamespaceResource, namespace],
      [
        "an object with only a generateName",
        ServiceResource,
        edit(service, "metadata", { generateName: "telo-run-", namespace: "telo-sessions" })
      ],
      [
        "empty label values and prefixed label keys",
        IngressResource,
        edit(ingress, "metadata.labels", { "example.com/Key_1.x": "", a: "A-b_c.D" })
      ],
      [
        "annotation keys in upper case",
        IngressResource,
        edit(ingress, "metadata.annotations", { "Example.com/Note": "x" })
      ]
    ] as const
  )("%s", (_name, resource: ResourceType<unknown>, object: KubeObject) => {
    expect(validateObject(resource, object)).toEqual([])
  })
})

describe("validateObject words its errors as the server does", () => {
  it("reports a bad object name as a lowercase RFC 1123 subdomain, with the regex", () => {
    expect(validateObject(IngressResource, edit(ingress, "metadata.name", "foo_bar"))).toEqual([
      { reason: "FieldValueInvalid", field: "metadata.name", message: `Invalid value: "foo_bar": ${RFC1123_SUBDOMAIN}` }
    ])
  })

  it("reports a Service name as a DNS-1035 label, double space and all", () => {
    // Go builds the examples list as "'a', " + " or " + "'b', ", so the server prints two spaces.
    expect(validateObject(ServiceResource, edit(service, "metadata.name", "1-web"))).toEqual([
      { reason: "FieldValueInvalid", field: "metadata.name", message: `Invalid value: "1-web": ${DNS1035_LABEL}` }
    ])
  })

  it("reports both the length and the pattern when a name breaks both", () => {
    const name = `${"A".repeat(64)}`
    expect(validateObject(NamespaceResource, edit(namespace, "metadata.name", name))).toEqual([
      {
        reason: "FieldValueInvalid",
        field: "metadata.name",
        message: `Invalid value: "${name}": must be no more than 63 characters`
      },
      { reason: "FieldValueInvalid", field: "metadata.name", message: `Invalid value: "${name}": ${RFC1123_LABEL}` }
    ])
  })

  it("quotes values the way Go's %q does", () => {
    expect(goQuote("a\"b\\c\n\u0001é")).toBe("\"a\\\"b\\\\c\\n\\x01é\"")
    expect(validateObject(IngressResource, edit(ingress, "spec.rules[0].host", "a\"b"))[0]?.message).toBe(
      `Invalid value: "a\\"b": ${RFC1123_SUBDOMAIN}`
    )
  })

  it("refuses an IP address as an Ingress host", () => {
    expect(validateObject(IngressResource, edit(ingress, "spec.rules[0].host", "10.0.0.1"))).toEqual([
      {
        reason: "FieldValueInvalid",
        field: "spec.rules[0].host",
        message: "Invalid value: \"10.0.0.1\": must be a DNS name, not an IP address"
      }
    ])
  })

  it("refuses a wildcard anywhere but a leading `*.`", () => {
    expect(validateObject(IngressResource, edit(ingress, "spec.rules[0].host", "foo.*.com"))).toEqual([
      { reason: "FieldValueInvalid", field: "spec.rules[0].host", message: `Invalid value: "foo.*.com": ${WILDCARD}` }
    ])
  })

  it("refuses a Prefix path with `//`", () => {
    expect(validateObject(IngressResource, edit(ingress, "spec.rules[0].http.paths[0].path", "/a//b"))).toEqual([
      {
        reason: "FieldValueInvalid",
        field: "spec.rules[0].http.paths[0].path",
        message: `Invalid value: "/a//b": must not contain '//'`
      }
    ])
  })

  it("refuses port 70000 on an Ingress backend, an HTTPRoute backendRef and a Service", () => {
    expect(
      validateObject(IngressResource, edit(ingress, "spec.rules[0].http.paths[0].backend.service.port.number", 70000))
    ).toEqual([
      {
        reason: "FieldValueInvalid",
        field: "spec.rules[0].http.paths[0].backend.service.port.number",
        message: "Invalid value: 70000: must be between 1 and 65535, inclusive"
      }
    ])
    expect(validateObject(HttpRouteResource, edit(httpRoute, "spec.rules[0].backendRefs[0].port", 70000))).toEqual([
      {
        reason: "FieldValueInvalid",
        field: "spec.rules[0].backendRefs[0].port",
        message: "Invalid value: 70000: spec.rules[0].backendRefs[0].port in body should be less than or equal to 65535"
      }
    ])
    // An unset targetPort is defaulted to the port before validation, so it is wrong too.
    expect(validateObject(ServiceResource, edit(service, "spec.ports", [{ port: 70000 }]))).toEqual([
      {
        reason: "FieldValueInvalid",
        field: "spec.ports[0].port",
        message: "Invalid value: 70000: must be between 1 and 65535, inclusive"
      },
      {
        reason: "FieldValueInvalid",
        field: "spec.ports[0].targetPort",
        message: "Invalid value: 70000: must be between 1 and 65535, inclusive"
      }
    ])
  })

  it("refuses a Service backendRef without a port, by the CRD's CEL rule", () => {
    expect(validateObject(HttpRouteResource, edit(httpRoute, "spec.rules[0].backendRefs[0].port", undefined))).toEqual([
      {
        reason: "FieldValueInvalid",
        field: "spec.rules[0].backendRefs[0]",
        message: "Invalid value: Must have port for Service reference"
      }
    ])
  })

  it("refuses 17 hostnames, and says the CEL rules went unchecked", () => {
    expect(validateObject(HttpRouteResource, edit(httpRoute, "spec.hostnames", repeat(17, (i) => `h${i}.telo.run`))))
      .toEqual([
        { reason: "FieldValueTooMany", field: "spec.hostnames", message: "Too many: 17: must have at most 16 items" },
        CEL_SKIPPED
      ])
  })

  it("still runs the CEL rules after an error that does not block them", () => {
    const route = edit(edit(httpRoute, "spec.hostnames", ["foo.*.com"]), "spec.rules[0].backendRefs[0].port", undefined)
    expect(validateObject(HttpRouteResource, route)).toEqual([
      {
        reason: "FieldValueInvalid",
        field: "spec.hostnames[0]",
        message: `Invalid value: "foo.*.com": spec.hostnames[0] in body should match '${HOSTNAME_PATTERN}'`
      },
      {
        reason: "FieldValueInvalid",
        field: "spec.rules[0].backendRefs[0]",
        message: "Invalid value: Must have port for Service reference"
      }
    ])
  })

  it("skips the CEL rules when a required field is missing, as the apiserver does", () => {
    const route = edit(
      edit(httpRoute, "spec.parentRefs[0].name", undefined),
      "spec.rules[0].backendRefs[0].port",
      undefined
    )
    expect(validateObject(HttpRouteResource, route)).toEqual([
      { reason: "FieldValueRequired", field: "spec.parentRefs[0].name", message: "Required value" },
      CEL_SKIPPED
    ])
  })

  it("reports a listener name twice: as a list-map duplicate and by the Gateway's CEL rule", () => {
    const listeners = [
      { name: "tcp", port: 80, protocol: "HTTP" },
      { name: "tcp", port: 81, protocol: "HTTP" }
    ]
    expect(validateObject(GatewayResource, edit(gateway, "spec.listeners", listeners))).toEqual([
      { reason: "FieldValueDuplicate", field: "spec.listeners[1]", message: "Duplicate value: {\"name\":\"tcp\"}" },
      {
        reason: "FieldValueInvalid",
        field: "spec.listeners",
        message: "Invalid value: Listener name must be unique within the Gateway"
      }
    ])
  })

  it("prints the Service port struct the server compares for a duplicate port", () => {
    const ports = [
      { name: "a", port: 80 },
      { name: "b", port: 80, protocol: "TCP" }
    ]
    expect(validateObject(ServiceResource, edit(service, "spec.ports", ports))).toEqual([
      {
        reason: "FieldValueDuplicate",
        field: "spec.ports[1]",
        message:
          "Duplicate value: {\"Name\":\"\",\"Protocol\":\"TCP\",\"AppProtocol\":null,\"Port\":80,\"TargetPort\":0,\"NodePort\":0}"
      }
    ])
  })
})

// ---------------------------------------------------------------------------
// One row per rule: the object, and the error that must be among those reported
// ---------------------------------------------------------------------------

interface Row {
  readonly rule: string
  readonly resource: ResourceType<unknown>
  readonly object: KubeObject
  readonly field: string
  readonly reason: string
  /** The whole message, or a part of it. */
  readonly message: string | RegExp
}

const row = (
  rule: string,
  resource: ResourceType<unknown>,
  object: KubeObject,
  field: string,
  reason: string,
  message: string | RegExp
): Row => ({ rule, resource, object, field, reason, message })

const I = "FieldValueInvalid"
const R = "FieldValueRequired"
const NS = "FieldValueNotSupported"
const TL = "FieldValueTooLong"
const TM = "FieldValueTooMany"
const D = "FieldValueDuplicate"
const F = "FieldValueForbidden"
const T = "FieldValueTypeInvalid"

const backend = "spec.rules[0].http.paths[0].backend"
const ingressPath = "spec.rules[0].http.paths[0]"
const match = "spec.rules[0].matches[0].path"
const backendRef = "spec.rules[0].backendRefs[0]"

const metadataRows: ReadonlyArray<Row> = [
  row(
    "name is required without a generateName",
    IngressResource,
    edit(ingress, "metadata.name", undefined),
    "metadata.name",
    R,
    "Required value: name or generateName is required"
  ),
  row(
    "a generateName must make a valid name",
    IngressResource,
    edit(ingress, "metadata", { generateName: "Bad_", namespace: "ns" }),
    "metadata.generateName",
    I,
    /^Invalid value: "Bad_": a lowercase RFC 1123 subdomain/
  ),
  row(
    "a Service name is at most 63 characters",
    ServiceResource,
    edit(service, "metadata.name", `s${"a".repeat(63)}`),
    "metadata.name",
    I,
    /: must be no more than 63 characters$/
  ),
  row(
    "a Namespace name is a label: no dots",
    NamespaceResource,
    edit(namespace, "metadata.name", "a.b"),
    "metadata.name",
    I,
    "Invalid value: \"a.b\": must not contain dots"
  ),
  row(
    "a namespaced object needs a namespace",
    IngressResource,
    edit(ingress, "metadata.namespace", undefined),
    "metadata.namespace",
    R,
    "Required value"
  ),
  row(
    "a namespace is a DNS label",
    HttpRouteResource,
    edit(httpRoute, "metadata.namespace", "Sessions"),
    "metadata.namespace",
    I,
    `Invalid value: "Sessions": ${RFC1123_LABEL}`
  ),
  row(
    "a cluster-scoped object has no namespace",
    IngressClassResource,
    edit(ingressClass, "metadata.namespace", "ns"),
    "metadata.namespace",
    F,
    "Forbidden: not allowed on this type"
  ),
  row(
    "generation is not negative",
    ServiceResource,
    edit(service, "metadata.generation", -1),
    "metadata.generation",
    I,
    "Invalid value: -1: must be greater than or equal to 0"
  ),
  row(
    "a label key prefix is a DNS subdomain",
    IngressResource,
    edit(ingress, ["metadata", "labels"], { "Example.com/x": "v" }),
    "metadata.labels",
    I,
    /^Invalid value: "Example.com\/x": prefix part a lowercase RFC 1123 subdomain/
  ),
  row(
    "a label key prefix is not empty",
    IngressResource,
    edit(ingress, ["metadata", "labels"], { "/x": "v" }),
    "metadata.labels",
    I,
    "Invalid value: \"/x\": prefix part must be non-empty"
  ),
  row(
    "a label key name is at most 63 bytes",
    IngressResource,
    edit(ingress, ["metadata", "labels"], { [`p/${"n".repeat(64)}`]: "v" }),
    "metadata.labels",
    I,
    /: name part must be no more than 63 bytes$/
  ),
  row(
    "a label key name starts and ends alphanumeric",
    IngressResource,
    edit(ingress, ["metadata", "labels"], { "p/-x": "v" }),
    "metadata.labels",
    I,
    /: name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character \(e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '\(\[A-Za-z0-9\]\[-A-Za-z0-9_.\]\*\)\?\[A-Za-z0-9\]'\)$/
  ),
  row(
    "a label key has at most one '/'",
    IngressResource,
    edit(ingress, ["metadata", "labels"], { "a/b/c": "v" }),
    "metadata.labels",
    I,
    /^Invalid value: "a\/b\/c": a valid label key must consist of .* with an optional DNS subdomain prefix and '\/' \(e.g. 'example.com\/MyName'\)$/
  ),
  row(
    "a label value is at most 63 bytes",
    IngressResource,
    edit(ingress, ["metadata", "labels"], { k: "v".repeat(64) }),
    "metadata.labels",
    I,
    /: must be no more than 63 bytes$/
  ),
  row(
    "a label value starts and ends alphanumeric",
    IngressResource,
    edit(ingress, ["metadata", "labels"], { k: "-v" }),
    "metadata.labels",
    I,
    `Invalid value: "-v": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')`
  ),
  row(
    "an annotation key is a qualified name",
    IngressResource,
    edit(ingress, ["metadata", "annotations"], { "bad key": "v" }),
    "metadata.annotations",
    I,
    /^Invalid value: "bad key": name part must consist of/
  ),
  row(
    "annotations total at most 256 KiB",
    IngressResource,
    edit(ingress, ["metadata", "annotations"], { a: "x".repeat(256 * 1024) }),
    "metadata.annotations",
    TL,
    "Too long: may not be more than 262144 bytes"
  ),
  row(
    "an ownerReference needs an apiVersion",
    IngressResource,
    edit(ingress, "metadata.ownerReferences[0].apiVersion", ""),
    "metadata.ownerReferences.apiVersion",
    I,
    "Invalid value: \"\": version must not be empty"
  ),
  row(
    "an ownerReference needs a kind",
    IngressResource,
    edit(ingress, "metadata.ownerReferences[0].kind", undefined),
    "metadata.ownerReferences.kind",
    I,
    "Invalid value: \"\": kind must not be empty"
  ),
  row(
    "an ownerReference needs a name",
    IngressResource,
    edit(ingress, "metadata.ownerReferences[0].name", ""),
    "metadata.ownerReferences.name",
    I,
    "Invalid value: \"\": name must not be empty"
  ),
  row(
    "an ownerReference needs a uid",
    IngressResource,
    edit(ingress, "metadata.ownerReferences[0].uid", ""),
    "metadata.ownerReferences.uid",
    I,
    "Invalid value: \"\": uid must not be empty"
  ),
  row(
    "an Event cannot own anything",
    IngressResource,
    edit(ingress, "metadata.ownerReferences", [{ apiVersion: "v1", kind: "Event", name: "e", uid: "u" }]),
    "metadata.ownerReferences",
    I,
    "Invalid value: {\"apiVersion\":\"v1\",\"kind\":\"Event\",\"name\":\"e\",\"uid\":\"u\"}: /v1, Kind=Event is disallowed from being an owner"
  ),
  row(
    "only one ownerReference is the controller",
    IngressResource,
    edit(ingress, "metadata.ownerReferences", [owner, { ...owner, name: "pod2", uid: "uid2" }]),
    "metadata.ownerReferences",
    I,
    /: Only one reference can have Controller set to true\. Found "true" in references for Pod\/pod and Pod\/pod2$/
  )
]

const serviceRows: ReadonlyArray<Row> = [
  row(
    "a ClusterIP Service needs ports",
    ServiceResource,
    edit(service, "spec.ports", []),
    "spec.ports",
    R,
    "Required value"
  ),
  row(
    "a port is at least 1",
    ServiceResource,
    edit(service, "spec.ports[0].port", 0),
    "spec.ports[0].port",
    I,
    "Invalid value: 0: must be between 1 and 65535, inclusive"
  ),
  row(
    "a protocol is TCP, UDP or SCTP",
    ServiceResource,
    edit(service, "spec.ports[0].protocol", "HTTP"),
    "spec.ports[0].protocol",
    NS,
    "Unsupported value: \"HTTP\": supported values: \"SCTP\", \"TCP\", \"UDP\""
  ),
  row(
    "ports are named when there are several",
    ServiceResource,
    edit(service, "spec.ports[1].name", undefined),
    "spec.ports[1].name",
    R,
    "Required value"
  ),
  row(
    "port names are unique",
    ServiceResource,
    edit(service, "spec.ports[1].name", "p8080"),
    "spec.ports[1].name",
    D,
    "Duplicate value: \"p8080\""
  ),
  row(
    "a port name is a DNS label",
    ServiceResource,
    edit(service, "spec.ports[0].name", "P8080"),
    "spec.ports[0].name",
    I,
    `Invalid value: "P8080": ${RFC1123_LABEL}`
  ),
  row(
    "a (port, protocol) pair appears once",
    ServiceResource,
    edit(service, "spec.ports[1]", { name: "b", port: 8080, protocol: "TCP" }),
    "spec.ports[1]",
    D,
    /^Duplicate value: \{"Name":"","Protocol":"TCP","AppProtocol":null,"Port":8080,"TargetPort":0,"NodePort":0\}$/
  ),
  row(
    "a targetPort number is in range",
    ServiceResource,
    edit(service, "spec.ports[0].targetPort", 70000),
    "spec.ports[0].targetPort",
    I,
    "Invalid value: 70000: must be between 1 and 65535, inclusive"
  ),
  row(
    "a targetPort name is an IANA name (≤15)",
    ServiceResource,
    edit(service, "spec.ports[0].targetPort", "a-sixteen-chars1"),
    "spec.ports[0].targetPort",
    I,
    "Invalid value: \"a-sixteen-chars1\": must be no more than 15 characters"
  ),
  row(
    "a targetPort name has no '--'",
    ServiceResource,
    edit(service, "spec.ports[0].targetPort", "a--b"),
    "spec.ports[0].targetPort",
    I,
    "Invalid value: \"a--b\": must not contain consecutive hyphens"
  ),
  row(
    "a targetPort name has a letter",
    ServiceResource,
    edit(service, "spec.ports[0].targetPort", "8-0"),
    "spec.ports[0].targetPort",
    I,
    "Invalid value: \"8-0\": must contain at least one letter (a-z)"
  ),
  row(
    "selector values are label values",
    ServiceResource,
    edit(service, ["spec", "selector"], { "telo.run/session-id": "bad value" }),
    "spec.selector",
    I,
    /^Invalid value: "bad value": a valid label must be/
  ),
  row(
    "a type is one the server knows",
    ServiceResource,
    edit(service, "spec.type", "Internal"),
    "spec.type",
    NS,
    "Unsupported value: \"Internal\": supported values: \"ClusterIP\", \"ExternalName\", \"LoadBalancer\", \"NodePort\""
  ),
  row(
    "an ExternalName Service names its target",
    ServiceResource,
    edit(service, "spec", { type: "ExternalName" }),
    "spec.externalName",
    R,
    "Required value"
  ),
  row(
    "an appProtocol is a qualified name",
    ServiceResource,
    edit(service, "spec.ports[0].appProtocol", "a/b/c"),
    "spec.ports[0].appProtocol",
    I,
    /^Invalid value: "a\/b\/c": a valid label key/
  )
]

const ingressRows: ReadonlyArray<Row> = [
  row(
    "an IPv6 host is not a DNS name",
    IngressResource,
    edit(ingress, "spec.rules[0].host", "fe80::1"),
    "spec.rules[0].host",
    I,
    "Invalid value: \"fe80::1\": must be a DNS name, not an IP address"
  ),
  row(
    "a host is lower case",
    IngressResource,
    edit(ingress, "spec.rules[0].host", "Web.Example.com"),
    "spec.rules[0].host",
    I,
    `Invalid value: "Web.Example.com": ${RFC1123_SUBDOMAIN}`
  ),
  row(
    "a host is at most 253 characters",
    IngressResource,
    edit(ingress, "spec.rules[0].host", `${"a.".repeat(127)}a`),
    "spec.rules[0].host",
    I,
    /: must be no more than 253 characters$/
  ),
  row(
    "a wildcard is only a leading label",
    IngressResource,
    edit(ingress, "spec.rules[0].host", "*foo.telo.run"),
    "spec.rules[0].host",
    I,
    `Invalid value: "*foo.telo.run": ${WILDCARD}`
  ),
  row(
    "pathType is required",
    IngressResource,
    edit(ingress, `${ingressPath}.pathType`, undefined),
    `${ingressPath}.pathType`,
    R,
    "Required value: pathType must be specified"
  ),
  row(
    "pathType is Exact, Prefix or ImplementationSpecific",
    IngressResource,
    edit(ingress, `${ingressPath}.pathType`, "Regex"),
    `${ingressPath}.pathType`,
    NS,
    "Unsupported value: \"Regex\": supported values: \"Exact\", \"ImplementationSpecific\", \"Prefix\""
  ),
  row(
    "a Prefix path is absolute",
    IngressResource,
    edit(ingress, `${ingressPath}.path`, "api"),
    `${ingressPath}.path`,
    I,
    "Invalid value: \"api\": must be an absolute path"
  ),
  row(
    "an Exact path is absolute, even when empty",
    IngressResource,
    edit(edit(ingress, `${ingressPath}.pathType`, "Exact"), `${ingressPath}.path`, undefined),
    `${ingressPath}.path`,
    I,
    "Invalid value: \"\": must be an absolute path"
  ),
  row(
    "a Prefix path has no '/./'",
    IngressResource,
    edit(ingress, `${ingressPath}.path`, "/a/./b"),
    `${ingressPath}.path`,
    I,
    `Invalid value: "/a/./b": must not contain '/./'`
  ),
  row(
    "a Prefix path has no '/../'",
    IngressResource,
    edit(ingress, `${ingressPath}.path`, "/a/../b"),
    `${ingressPath}.path`,
    I,
    `Invalid value: "/a/../b": must not contain '/../'`
  ),
  row(
    "a Prefix path has no '%2f'",
    IngressResource,
    edit(ingress, `${ingressPath}.path`, "/a%2fb"),
    `${ingressPath}.path`,
    I,
    `Invalid value: "/a%2fb": must not contain '%2f'`
  ),
  row(
    "an Exact path has no '%2F'",
    IngressResource,
    edit(edit(ingress, `${ingressPath}.pathType`, "Exact"), `${ingressPath}.path`, "/a%2Fb"),
    `${ingressPath}.path`,
    I,
    `Invalid value: "/a%2Fb": must not contain '%2F'`
  ),
  row(
    "a Prefix path does not end with '/..'",
    IngressResource,
    edit(ingress, `${ingressPath}.path`, "/a/.."),
    `${ingressPath}.path`,
    I,
    `Invalid value: "/a/..": cannot end with '/..'`
  ),
  row(
    "a Prefix path does not end with '/.'",
    IngressResource,
    edit(ingress, `${ingressPath}.path`, "/a/."),
    `${ingressPath}.path`,
    I,
    `Invalid value: "/a/.": cannot end with '/.'`
  ),
  row(
    "an ImplementationSpecific path, when given, is absolute",
    IngressResource,
    edit(edit(ingress, `${ingressPath}.pathType`, "ImplementationSpecific"), `${ingressPath}.path`, "x"),
    `${ingressPath}.path`,
    I,
    "Invalid value: \"x\": must be an absolute path"
  ),
  row(
    "http needs paths",
    IngressResource,
    edit(ingress, "spec.rules[0].http.paths", []),
    "spec.rules[0].http.paths",
    R,
    "Required value"
  ),
  row(
    "an Ingress needs rules or a default backend",
    IngressResource,
    edit(ingress, "spec", {}),
    "spec",
    I,
    "Invalid value: null: either `defaultBackend` or `rules` must be specified"
  ),
  row(
    "an empty rules list is not rules",
    IngressResource,
    edit(ingress, "spec", { rules: [] }),
    "spec",
    I,
    "Invalid value: []: either `defaultBackend` or `rules` must be specified"
  ),
  row(
    "a backend is a service or a resource",
    IngressResource,
    edit(ingress, backend, {}),
    backend,
    I,
    "Invalid value: \"\": resource or service backend is required"
  ),
  row(
    "a backend is not both",
    IngressResource,
    edit(ingress, `${backend}.resource`, { kind: "Bucket", name: "b" }),
    backend,
    I,
    "Invalid value: \"\": cannot set both resource and service backends"
  ),
  row(
    "a backend service has a name",
    IngressResource,
    edit(ingress, `${backend}.service.name`, undefined),
    `${backend}.service.name`,
    R,
    "Required value"
  ),
  row(
    "a backend service name is a DNS-1035 label",
    IngressResource,
    edit(ingress, `${backend}.service.name`, "1web"),
    `${backend}.service.name`,
    I,
    `Invalid value: "1web": ${DNS1035_LABEL}`
  ),
  row(
    "a backend port has a name or a number",
    IngressResource,
    edit(ingress, `${backend}.service.port`, {}),
    backend,
    R,
    "Required value: port name or number is required"
  ),
  row(
    "a backend port has not both",
    IngressResource,
    edit(ingress, `${backend}.service.port`, { name: "http", number: 80 }),
    backend,
    I,
    "Invalid value: \"\": cannot set both port name & port number"
  ),
  row(
    "a backend port name is an IANA name",
    IngressResource,
    edit(ingress, `${backend}.service.port`, { name: "HTTP" }),
    `${backend}.service.port.name`,
    I,
    "Invalid value: \"HTTP\": must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)"
  ),
  row(
    "a backend port number is at least 1",
    IngressResource,
    edit(ingress, `${backend}.service.port`, { number: -1 }),
    `${backend}.service.port.number`,
    I,
    "Invalid value: -1: must be between 1 and 65535, inclusive"
  ),
  row(
    "a resource backend has a kind",
    IngressResource,
    edit(ingress, backend, { resource: { name: "b" } }),
    `${backend}.resource.kind`,
    R,
    "Required value: kind is required"
  ),
  row(
    "a resource backend name fits a path segment",
    IngressResource,
    edit(ingress, backend, { resource: { kind: "Bucket", name: "a/b" } }),
    `${backend}.resource.name`,
    I,
    `Invalid value: "a/b": may not contain '/'`
  ),
  row(
    "a TLS host is a subdomain or a wildcard",
    IngressResource,
    edit(ingress, "spec.tls[0].hosts[1]", "foo.*.run"),
    "spec.tls[0].hosts[1]",
    I,
    `Invalid value: "foo.*.run": ${WILDCARD}`
  ),
  row(
    "a TLS secretName is a subdomain",
    IngressResource,
    edit(ingress, "spec.tls[0].secretName", "Origin_TLS"),
    "spec.tls[0].secretName",
    I,
    `Invalid value: "Origin_TLS": ${RFC1123_SUBDOMAIN}`
  ),
  row(
    "an ingressClassName is a subdomain",
    IngressResource,
    edit(ingress, "spec.ingressClassName", "Nginx"),
    "spec.ingressClassName",
    I,
    `Invalid value: "Nginx": ${RFC1123_SUBDOMAIN}`
  ),
  row(
    "the class annotation agrees with ingressClassName",
    IngressResource,
    edit(ingress, ["metadata", "annotations"], { "kubernetes.io/ingress.class": "traefik" }),
    "annotations.kubernetes.io/ingress.class",
    I,
    "Invalid value: \"traefik\": must match `ingressClassName` when both are specified"
  )
]

const ingressClassRows: ReadonlyArray<Row> = [
  row(
    "a controller is required",
    IngressClassResource,
    edit(ingressClass, "spec", {}),
    "spec.controller",
    R,
    "Required value"
  ),
  row(
    "a controller is a domain-prefixed path",
    IngressClassResource,
    edit(ingressClass, "spec.controller", "nginx"),
    "spec.controller",
    I,
    "Invalid value: \"nginx\": must be a domain-prefixed path (such as \"acme.io/foo\")"
  ),
  row(
    "a controller's domain is a subdomain",
    IngressClassResource,
    edit(ingressClass, "spec.controller", "Acme.io/x"),
    "spec.controller",
    I,
    `Invalid value: "Acme.io": ${RFC1123_SUBDOMAIN}`
  ),
  row(
    "a controller's path uses path characters",
    IngressClassResource,
    edit(ingressClass, "spec.controller", "acme.io/a b"),
    "spec.controller",
    I,
    `Invalid value: "a b": Invalid path (regex used for validation is '[A-Za-z0-9/\\-._~%!$&'()*+,;=:]+')`
  ),
  row(
    "a controller is at most 250 characters",
    IngressClassResource,
    edit(ingressClass, "spec.controller", `acme.io/${"x".repeat(250)}`),
    "spec.controller",
    TL,
    "Too long: may not be more than 250 bytes"
  ),
  row(
    "Namespace-scoped parameters name their namespace",
    IngressClassResource,
    edit(ingressClass, "spec.parameters", { kind: "P", name: "p", scope: "Namespace" }),
    "spec.parameters.namespace",
    R,
    "Required value: `parameters.scope` is set to 'Namespace'"
  ),
  row(
    "parameters scope is Cluster or Namespace",
    IngressClassResource,
    edit(ingressClass, "spec.parameters", { kind: "P", name: "p", scope: "Global" }),
    "spec.parameters.scope",
    NS,
    "Unsupported value: \"Global\": supported values: \"Cluster\", \"Namespace\""
  )
]

const httpRouteRows: ReadonlyArray<Row> = [
  row("a route has a spec", HttpRouteResource, edit(httpRoute, "spec", undefined), "spec", R, "Required value"),
  row(
    "a hostname is at most 253 characters",
    HttpRouteResource,
    edit(httpRoute, "spec.hostnames", [`${"a.".repeat(127)}a`]),
    "spec.hostnames[0]",
    TL,
    "Too long: may not be more than 253 bytes"
  ),
  row(
    "a hostname is not empty",
    HttpRouteResource,
    edit(httpRoute, "spec.hostnames", [""]),
    "spec.hostnames[0]",
    I,
    "Invalid value: \"\": spec.hostnames[0] in body should be at least 1 chars long"
  ),
  row(
    "a hostname is a string, not null",
    HttpRouteResource,
    edit(httpRoute, "spec.hostnames", [null]),
    "spec.hostnames[0]",
    T,
    "Invalid value: \"null\": spec.hostnames[0] in body must be of type string: \"null\""
  ),
  row(
    "a hostname is lower case",
    HttpRouteResource,
    edit(httpRoute, "spec.hostnames", ["Web.telo.run"]),
    "spec.hostnames[0]",
    I,
    `Invalid value: "Web.telo.run": spec.hostnames[0] in body should match '${HOSTNAME_PATTERN}'`
  ),
  row(
    "at most 32 parentRefs",
    HttpRouteResource,
    edit(httpRoute, "spec.parentRefs", repeat(33, (i) => ({ name: `gw${i}` }))),
    "spec.parentRefs",
    TM,
    "Too many: 33: must have at most 32 items"
  ),
  row(
    "a parentRef has a name",
    HttpRouteResource,
    edit(httpRoute, "spec.parentRefs[0].name", undefined),
    "spec.parentRefs[0].name",
    R,
    "Required value"
  ),
  row(
    "a parentRef name is not empty",
    HttpRouteResource,
    edit(httpRoute, "spec.parentRefs[0].name", ""),
    "spec.parentRefs[0].name",
    I,
    "Invalid value: \"\": spec.parentRefs[0].name in body should be at least 1 chars long"
  ),
  row(
    "a parentRef name is at most 253 characters",
    HttpRouteResource,
    edit(httpRoute, "spec.parentRefs[0].name", "g".repeat(254)),
    "spec.parentRefs[0].name",
    TL,
    "Too long: may not be more than 253 bytes"
  ),
  row(
    "a parentRef group matches the Group pattern",
    HttpRouteResource,
    edit(httpRoute, "spec.parentRefs[0].group", "Gateway_API"),
    "spec.parentRefs[0].group",
    I,
    /in body should match '\^\$\|\^\[a-z0-9\]/
  ),
  row(
    "a parentRef kind matches the Kind pattern",
    HttpRouteResource,
    edit(httpRoute, "spec.parentRefs[0].kind", "1Gateway"),
    "spec.parentRefs[0].kind",
    I,
    "Invalid value: \"1Gateway\": spec.parentRefs[0].kind in body should match '^[a-zA-Z]([-a-zA-Z0-9]*[a-zA-Z0-9])?$'"
  ),
  row(
    "a parentRef namespace is a DNS label",
    HttpRouteResource,
    edit(httpRoute, "spec.parentRefs[0].namespace", "gw.ns"),
    "spec.parentRefs[0].namespace",
    I,
    "Invalid value: \"gw.ns\": spec.parentRefs[0].namespace in body should match '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$'"
  ),
  row(
    "a sectionName matches the SectionName pattern",
    HttpRouteResource,
    edit(httpRoute, "spec.parentRefs[0].sectionName", "HTTPS"),
    "spec.parentRefs[0].sectionName",
    I,
    /^Invalid value: "HTTPS": spec\.parentRefs\[0\]\.sectionName in body should match/
  ),
  row(
    "two refs to one parent need sectionNames",
    HttpRouteResource,
    edit(httpRoute, "spec.parentRefs", [{ name: "gw" }, { name: "gw", sectionName: "a" }]),
    "spec.parentRefs",
    I,
    "Invalid value: sectionName must be specified when parentRefs includes 2 or more references to the same parent"
  ),
  row(
    "two refs to one parent need distinct sectionNames",
    HttpRouteResource,
    edit(httpRoute, "spec.parentRefs", [{ name: "gw" }, { name: "gw", group: "gateway.networking.k8s.io" }]),
    "spec.parentRefs",
    I,
    "Invalid value: sectionName must be unique when parentRefs includes 2 or more references to the same parent"
  ),
  row(
    "at most 16 rules",
    HttpRouteResource,
    edit(httpRoute, "spec.rules", repeat(17, () => ({ backendRefs: [{ name: "s", port: 80 }] }))),
    "spec.rules",
    TM,
    "Too many: 17: must have at most 16 items"
  ),
  row(
    "at most 64 matches in a rule",
    HttpRouteResource,
    edit(httpRoute, "spec.rules[0].matches", repeat(65, () => ({ path: { value: "/" } }))),
    "spec.rules[0].matches",
    TM,
    "Too many: 65: must have at most 64 items"
  ),
  row(
    "at most 128 matches in a route",
    HttpRouteResource,
    edit(httpRoute, "spec.rules", repeat(3, () => ({ matches: repeat(64, () => ({})) }))),
    "spec.rules",
    I,
    "Invalid value: While 16 rules and 64 matches per rule are allowed, the total number of matches across all rules in a route must be less than 128"
  ),
  row(
    "at most 16 backendRefs",
    HttpRouteResource,
    edit(httpRoute, "spec.rules[0].backendRefs", repeat(17, (i) => ({ name: `s${i}`, port: 80 }))),
    "spec.rules[0].backendRefs",
    TM,
    "Too many: 17: must have at most 16 items"
  ),
  row(
    "a backendRef has a name",
    HttpRouteResource,
    edit(httpRoute, `${backendRef}.name`, undefined),
    `${backendRef}.name`,
    R,
    "Required value"
  ),
  row(
    "a backendRef port is at least 1",
    HttpRouteResource,
    edit(httpRoute, `${backendRef}.port`, 0),
    `${backendRef}.port`,
    I,
    `Invalid value: 0: ${backendRef}.port in body should be greater than or equal to 1`
  ),
  row(
    "a backendRef port is an integer",
    HttpRouteResource,
    edit(httpRoute, `${backendRef}.port`, "8080"),
    `${backendRef}.port`,
    T,
    `Invalid value: "string": ${backendRef}.port in body must be of type integer: "string"`
  ),
  row(
    "a weight is at most 1000000",
    HttpRouteResource,
    edit(httpRoute, `${backendRef}.weight`, 1000001),
    `${backendRef}.weight`,
    I,
    `Invalid value: 1000001: ${backendRef}.weight in body should be less than or equal to 1000000`
  ),
  row(
    "a weight is not negative",
    HttpRouteResource,
    edit(httpRoute, `${backendRef}.weight`, -1),
    `${backendRef}.weight`,
    I,
    `Invalid value: -1: ${backendRef}.weight in body should be greater than or equal to 0`
  ),
  row(
    "a Service backendRef named by an explicit kind needs a port",
    HttpRouteResource,
    edit(httpRoute, backendRef, { group: "", kind: "Service", name: "s" }),
    backendRef,
    I,
    "Invalid value: Must have port for Service reference"
  ),
  row(
    "a path match type is one of three",
    HttpRouteResource,
    edit(httpRoute, `${match}.type`, "Prefix"),
    `${match}.type`,
    NS,
    "Unsupported value: \"Prefix\": supported values: \"Exact\", \"PathPrefix\", \"RegularExpression\""
  ),
  row(
    "a path value is at most 1024 characters",
    HttpRouteResource,
    edit(httpRoute, `${match}.value`, `/${"a".repeat(1024)}`),
    `${match}.value`,
    TL,
    "Too long: may not be more than 1024 bytes"
  ),
  row(
    "a PathPrefix value starts with '/'",
    HttpRouteResource,
    edit(httpRoute, `${match}.value`, "api"),
    match,
    I,
    `Invalid value: value must be an absolute path and start with '/' when type one of ['Exact', 'PathPrefix']`
  ),
  row(
    "a PathPrefix value has no '//'",
    HttpRouteResource,
    edit(httpRoute, `${match}.value`, "/a//b"),
    match,
    I,
    `Invalid value: must not contain '//' when type one of ['Exact', 'PathPrefix']`
  ),
  row(
    "an Exact value has no '/./'",
    HttpRouteResource,
    edit(httpRoute, match, { type: "Exact", value: "/a/./b" }),
    match,
    I,
    `Invalid value: must not contain '/./' when type one of ['Exact', 'PathPrefix']`
  ),
  row(
    "a PathPrefix value has no '/../'",
    HttpRouteResource,
    edit(httpRoute, `${match}.value`, "/a/../b"),
    match,
    I,
    `Invalid value: must not contain '/../' when type one of ['Exact', 'PathPrefix']`
  ),
  row(
    "a PathPrefix value has no '%2f'",
    HttpRouteResource,
    edit(httpRoute, `${match}.value`, "/a%2fb"),
    match,
    I,
    `Invalid value: must not contain '%2f' when type one of ['Exact', 'PathPrefix']`
  ),
  row(
    "a PathPrefix value has no '#'",
    HttpRouteResource,
    edit(httpRoute, `${match}.value`, "/a#b"),
    match,
    I,
    `Invalid value: must not contain '#' when type one of ['Exact', 'PathPrefix']`
  ),
  row(
    "a PathPrefix value does not end with '/..'",
    HttpRouteResource,
    edit(httpRoute, `${match}.value`, "/a/.."),
    match,
    I,
    `Invalid value: must not end with '/..' when type one of ['Exact', 'PathPrefix']`
  ),
  row(
    "a PathPrefix value does not end with '/.'",
    HttpRouteResource,
    edit(httpRoute, `${match}.value`, "/a/."),
    match,
    I,
    `Invalid value: must not end with '/.' when type one of ['Exact', 'PathPrefix']`
  ),
  row(
    "a PathPrefix value uses path characters",
    HttpRouteResource,
    edit(httpRoute, `${match}.value`, "/a b"),
    match,
    I,
    `Invalid value: must only contain valid characters (matching ^(?:[-A-Za-z0-9/._~!$&'()*+,;=:@]|[%][0-9a-fA-F]{2})+$) for types ['Exact', 'PathPrefix']`
  )
]

const gatewayRows: ReadonlyArray<Row> = [
  row(
    "a Gateway names its class",
    GatewayResource,
    edit(gateway, "spec.gatewayClassName", undefined),
    "spec.gatewayClassName",
    R,
    "Required value"
  ),
  row(
    "a Gateway has listeners",
    GatewayResource,
    edit(gateway, "spec.listeners", undefined),
    "spec.listeners",
    R,
    "Required value"
  ),
  row(
    "a Gateway has at least one listener",
    GatewayResource,
    edit(gateway, "spec.listeners", []),
    "spec.listeners",
    I,
    "Invalid value: 0: spec.listeners in body should have at least 1 items"
  ),
  row(
    "a Gateway has at most 64 listeners",
    GatewayResource,
    edit(gateway, "spec.listeners", repeat(65, (i) => ({ name: `l${i}`, port: 1000 + i, protocol: "HTTP" }))),
    "spec.listeners",
    TM,
    "Too many: 65: must have at most 64 items"
  ),
  row(
    "a listener has a port",
    GatewayResource,
    edit(gateway, "spec.listeners[1].port", undefined),
    "spec.listeners[1].port",
    R,
    "Required value"
  ),
  row(
    "a listener port is at most 65535",
    GatewayResource,
    edit(gateway, "spec.listeners[1].port", 70000),
    "spec.listeners[1].port",
    I,
    "Invalid value: 70000: spec.listeners[1].port in body should be less than or equal to 65535"
  ),
  row(
    "a listener protocol matches its pattern",
    GatewayResource,
    edit(gateway, "spec.listeners[1].protocol", "HTTP S"),
    "spec.listeners[1].protocol",
    I,
    /^Invalid value: "HTTP S": spec\.listeners\[1\]\.protocol in body should match/
  ),
  row(
    "a listener hostname matches the Hostname pattern",
    GatewayResource,
    edit(gateway, "spec.listeners[0].hostname", "foo.*.run"),
    "spec.listeners[0].hostname",
    I,
    `Invalid value: "foo.*.run": spec.listeners[0].hostname in body should match '${HOSTNAME_PATTERN}'`
  ),
  row(
    "a listener name matches the SectionName pattern",
    GatewayResource,
    edit(gateway, "spec.listeners[0].name", "HTTPS"),
    "spec.listeners[0].name",
    I,
    /^Invalid value: "HTTPS": spec\.listeners\[0\]\.name in body should match/
  ),
  row(
    "listeners differ in port, protocol or hostname",
    GatewayResource,
    edit(gateway, "spec.listeners[1]", { name: "https2", hostname: "*.telo.run", port: 443, protocol: "HTTPS" }),
    "spec.listeners",
    I,
    "Invalid value: Combination of port, protocol and hostname must be unique for each listener"
  ),
  row(
    "a TCP listener has no hostname",
    GatewayResource,
    edit(gateway, "spec.listeners[1]", { name: "tcp", hostname: "a.telo.run", port: 9000, protocol: "TCP" }),
    "spec.listeners",
    I,
    `Invalid value: hostname must not be specified for protocols ['TCP', 'UDP']`
  ),
  row(
    "an HTTP listener has no tls",
    GatewayResource,
    edit(gateway, "spec.listeners[1].tls", { mode: "Terminate" }),
    "spec.listeners",
    I,
    `Invalid value: tls must not be specified for protocols ['HTTP', 'TCP', 'UDP']`
  ),
  row(
    "an HTTPS listener terminates tls",
    GatewayResource,
    edit(gateway, "spec.listeners[0].tls", { mode: "Passthrough" }),
    "spec.listeners",
    I,
    "Invalid value: tls mode must be Terminate for protocol HTTPS"
  ),
  row(
    "allowedRoutes namespaces are All, Selector or Same",
    GatewayResource,
    edit(gateway, "spec.listeners[1].allowedRoutes.namespaces.from", "Everywhere"),
    "spec.listeners[1].allowedRoutes.namespaces.from",
    NS,
    "Unsupported value: \"Everywhere\": supported values: \"All\", \"Selector\", \"Same\""
  )
]

describe.each(
  [
    ["object metadata", metadataRows],
    ["Service", serviceRows],
    ["Ingress", ingressRows],
    ["IngressClass", ingressClassRows],
    ["HTTPRoute", httpRouteRows],
    ["Gateway", gatewayRows]
  ] as const
)("validateObject refuses what the server refuses: %s", (_kind, rows) => {
  it.each(rows.map((r) => [r.rule, r] as const))("%s", (_rule, r) => {
    const errors = validateObject(r.resource, r.object)
    expect(errors).toContainEqual({
      field: r.field,
      reason: r.reason,
      message: typeof r.message === "string" ? r.message : expect.stringMatching(r.message)
    })
  })
})

describe("validateObject on arbitrary bodies", () => {
  // The local cluster hands it whatever a client sent: it must answer, never throw.
  const resources = [
    ServiceResource,
    IngressResource,
    IngressClassResource,
    NamespaceResource,
    HttpRouteResource,
    GatewayResource,
    LeaseResource
  ]
  const lease = {
    apiVersion: "coordination.k8s.io/v1",
    kind: "Lease",
    metadata: { name: "leader", namespace: "telo-sessions" },
    spec: { holderIdentity: "a", leaseDurationSeconds: 15, leaseTransitions: 0 }
  }
  const bases: ReadonlyArray<object> = [service, ingress, ingressClass, namespace, httpRoute, gateway, lease]

  it.prop("returns field errors for any JSON value", { body: fc.jsonValue() }, ({ body }) => {
    for (const resource of resources) {
      expect(Array.isArray(validateObject(resource, body as KubeObject))).toBe(true)
    }
  })

  it.prop(
    "returns field errors when any part of a valid object is replaced by any JSON value",
    { which: fc.integer({ min: 0, max: resources.length - 1 }), at: fc.nat(), value: fc.jsonValue() },
    ({ which, at, value }) => {
      const base = bases[which] ?? service
      const paths: Array<ReadonlyArray<string | number>> = []
      const walk = (node: unknown, path: ReadonlyArray<string | number>): void => {
        paths.push(path)
        if (Array.isArray(node)) node.forEach((v, i) => walk(v, [...path, i]))
        else if (typeof node === "object" && node !== null) {
          for (const [k, v] of Object.entries(node)) walk(v, [...path, k])
        }
      }
      walk(base, [])
      const path = paths[at % paths.length] ?? []
      const object = path.length === 0 ? value : edit(base, path, value)
      expect(Array.isArray(validateObject(resources[which] ?? ServiceResource, object as KubeObject))).toBe(true)
    },
    { fastCheck: { numRuns: 500 } }
  )
})

describe("withSchemaDefaults", () => {
  it("writes back the defaults the HTTPRoute CRD declares", () => {
    const sparse = edit(httpRoute, "spec", {
      parentRefs: [{ name: "gw" }],
      rules: [{ backendRefs: [{ name: "svc", port: 80 }] }]
    })
    expect(withSchemaDefaults(HttpRouteResource, sparse).spec).toEqual({
      parentRefs: [{ group: "gateway.networking.k8s.io", kind: "Gateway", name: "gw" }],
      rules: [
        {
          matches: [{ path: { type: "PathPrefix", value: "/" } }],
          backendRefs: [{ group: "", kind: "Service", name: "svc", port: 80, weight: 1 }]
        }
      ]
    })
  })

  it("gives a route without rules the one default rule", () => {
    expect(withSchemaDefaults(HttpRouteResource, edit(httpRoute, "spec", {})).spec).toEqual({
      rules: [{ matches: [{ path: { type: "PathPrefix", value: "/" } }] }]
    })
  })

  it("defaults a Gateway listener to routes from its own namespace", () => {
    const defaulted = withSchemaDefaults(GatewayResource, gateway)
    expect(defaulted.spec.listeners[0]).toEqual({
      name: "https",
      hostname: "*.telo.run",
      port: 443,
      protocol: "HTTPS",
      allowedRoutes: { namespaces: { from: "Same" } }
    })
  })

  it("prunes a null field rather than refusing it", () => {
    const route = edit(httpRoute, "spec.hostnames", null)
    expect(withSchemaDefaults(HttpRouteResource, route).spec).not.toHaveProperty("hostnames")
    expect(validateObject(HttpRouteResource, route)).toEqual([])
  })

  it("leaves built-in kinds and the input untouched", () => {
    const before = structuredClone(httpRoute)
    withSchemaDefaults(HttpRouteResource, httpRoute)
    expect(httpRoute).toEqual(before)
    expect(withSchemaDefaults(ServiceResource, service)).toBe(service)
  })
})

describe("invalidStatus", () => {
  const hostError: FieldError = {
    reason: "FieldValueInvalid",
    field: "spec.rules[0].host",
    message: "Invalid value: \"10.0.0.1\": must be a DNS name, not an IP address"
  }
  const pathError: FieldError = {
    reason: "FieldValueInvalid",
    field: "spec.rules[0].http.paths[0].path",
    message: `Invalid value: "/a//b": must not contain '//'`
  }

  it("answers 422 Invalid with one bare error, the Kind and the group", () => {
    expect(invalidStatus(IngressResource, "x", [hostError])).toEqual({
      kind: "Status",
      apiVersion: "v1",
      metadata: {},
      status: "Failure",
      message:
        "Ingress.networking.k8s.io \"x\" is invalid: spec.rules[0].host: Invalid value: \"10.0.0.1\": must be a DNS name, not an IP address",
      reason: "Invalid",
      details: {
        name: "x",
        group: "networking.k8s.io",
        // The Kind, not the plural: unlike NotFound, an Invalid Status names the kind.
        kind: "Ingress",
        causes: [{ reason: "FieldValueInvalid", message: hostError.message, field: "spec.rules[0].host" }]
      },
      code: 422
    })
  })

  it("brackets several errors, says each once, and keeps every cause", () => {
    const status = invalidStatus(IngressResource, "x", [hostError, pathError, hostError])
    expect(status.message).toBe(
      `Ingress.networking.k8s.io "x" is invalid: [spec.rules[0].host: ${hostError.message}, spec.rules[0].http.paths[0].path: ${pathError.message}]`
    )
    expect(status.details?.causes).toHaveLength(3)
  })

  it("names a core kind without a group, and omits the group field", () => {
    const errors = validateObject(ServiceResource, edit(service, "spec.ports", []))
    expect(invalidStatus(ServiceResource, "telo-run-abc", errors)).toEqual({
      kind: "Status",
      apiVersion: "v1",
      metadata: {},
      status: "Failure",
      message: "Service \"telo-run-abc\" is invalid: spec.ports: Required value",
      reason: "Invalid",
      details: {
        name: "telo-run-abc",
        kind: "Service",
        causes: [{ reason: "FieldValueRequired", message: "Required value", field: "spec.ports" }]
      },
      code: 422
    })
  })

  it("carries the CEL note as a cause with the field <nil>", () => {
    const errors = validateObject(HttpRouteResource, edit(httpRoute, "spec.hostnames", repeat(17, (i) => `h${i}.a`)))
    expect(invalidStatus(HttpRouteResource, "r", errors).message).toBe(
      `HTTPRoute.gateway.networking.k8s.io "r" is invalid: [spec.hostnames: Too many: 17: must have at most 16 items, <nil>: ${CEL_SKIPPED.message}]`
    )
  })
})
