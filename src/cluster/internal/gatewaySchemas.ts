/**
 * The Gateway API v1 CRD schemas LocalCluster serves, HTTPRoute and Gateway, with
 * their defaults and CEL rules, as the standard channel's CRDs declare them.
 */
import type { ResourceType } from "../../domain/Resources.js"
import { type ArraySchema, type CelRule, type IntegerSchema, type ObjectSchema, rule, type StringSchema } from "./crdSchema.js"

// The Gateway API v1 string types, as their CRDs declare them.
const GROUP_PATTERN = "^$|^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
const KIND_PATTERN = "^[a-zA-Z]([-a-zA-Z0-9]*[a-zA-Z0-9])?$"
const NAMESPACE_PATTERN = "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"
const SECTION_NAME_PATTERN = "^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
const HOSTNAME_PATTERN = "^(\\*\\.)?[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
const PROTOCOL_PATTERN =
  "^[a-zA-Z0-9]([-a-zA-Z0-9]*[a-zA-Z0-9])?$|[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\\/[A-Za-z0-9]+$"
const PATH_CHARACTERS = "^(?:[-A-Za-z0-9/._~!$&'()*+,;=:@]|[%][0-9a-fA-F]{2})+$"

const groupSchema = (fallback?: string): StringSchema => ({
  type: "string",
  maxLength: 253,
  pattern: GROUP_PATTERN,
  ...(fallback !== undefined ? { default: fallback } : {})
})
const kindSchema = (fallback?: string): StringSchema => ({
  type: "string",
  minLength: 1,
  maxLength: 63,
  pattern: KIND_PATTERN,
  ...(fallback !== undefined ? { default: fallback } : {})
})
const objectNameSchema: StringSchema = { type: "string", minLength: 1, maxLength: 253 }
const namespaceSchema: StringSchema = { type: "string", minLength: 1, maxLength: 63, pattern: NAMESPACE_PATTERN }
const sectionNameSchema: StringSchema = { type: "string", minLength: 1, maxLength: 253, pattern: SECTION_NAME_PATTERN }
const hostnameSchema: StringSchema = { type: "string", minLength: 1, maxLength: 253, pattern: HOSTNAME_PATTERN }
const portNumberSchema: IntegerSchema = { type: "integer", minimum: 1, maximum: 65535 }

type ParentRefValue = {
  readonly group?: string
  readonly kind?: string
  readonly namespace?: string
  readonly name?: string
  readonly sectionName?: string
}

/** Two parentRefs that select the same object (the CRD's CEL, defaults applied). */
const sameParent = (a: ParentRefValue, b: ParentRefValue): boolean =>
  a.group === b.group &&
  a.kind === b.kind &&
  a.name === b.name &&
  (((a.namespace ?? "") === "" && (b.namespace ?? "") === "") ||
    (a.namespace !== undefined && b.namespace !== undefined && a.namespace === b.namespace))

const noSection = (p: ParentRefValue): boolean => (p.sectionName ?? "") === ""

const parentRefsSchema: ArraySchema = {
  type: "array",
  maxItems: 32,
  items: {
    type: "object",
    required: ["name"],
    properties: {
      group: groupSchema("gateway.networking.k8s.io"),
      kind: kindSchema("Gateway"),
      name: objectNameSchema,
      namespace: namespaceSchema,
      port: portNumberSchema,
      sectionName: sectionNameSchema
    }
  },
  // The standard channel's two rules on parentRefs that select the same parent.
  rules: [
    rule<ReadonlyArray<ParentRefValue>>(
      "sectionName must be specified when parentRefs includes 2 or more references to the same parent",
      (self) => self.every((p1) => self.every((p2) => (sameParent(p1, p2) ? noSection(p1) === noSection(p2) : true)))
    ),
    rule<ReadonlyArray<ParentRefValue>>(
      "sectionName must be unique when parentRefs includes 2 or more references to the same parent",
      (self) =>
        self.every(
          (p1) =>
            self.filter(
              (p2) =>
                sameParent(p1, p2) &&
                ((noSection(p1) && noSection(p2)) ||
                  (p1.sectionName !== undefined && p2.sectionName !== undefined && p1.sectionName === p2.sectionName))
            ).length === 1
        )
    )
  ]
}

type PathMatchValue = { readonly type: string; readonly value: string }
const exactOrPrefix = (p: PathMatchValue): boolean => p.type === "Exact" || p.type === "PathPrefix"
const pathRule = (message: string, holds: (value: string) => boolean): CelRule =>
  rule<PathMatchValue>(`${message} when type one of ['Exact', 'PathPrefix']`, (self) =>
    exactOrPrefix(self) ? holds(self.value) : true
  )

const pathMatchSchema: ObjectSchema = {
  type: "object",
  default: { type: "PathPrefix", value: "/" },
  properties: {
    type: { type: "string", enum: ["Exact", "PathPrefix", "RegularExpression"], default: "PathPrefix" },
    value: { type: "string", maxLength: 1024, default: "/" }
  },
  rules: [
    pathRule("value must be an absolute path and start with '/'", (v) => v.startsWith("/")),
    pathRule("must not contain '//'", (v) => !v.includes("//")),
    pathRule("must not contain '/./'", (v) => !v.includes("/./")),
    pathRule("must not contain '/../'", (v) => !v.includes("/../")),
    pathRule("must not contain '%2f'", (v) => !v.includes("%2f")),
    pathRule("must not contain '%2F'", (v) => !v.includes("%2F")),
    pathRule("must not contain '#'", (v) => !v.includes("#")),
    pathRule("must not end with '/..'", (v) => !v.endsWith("/..")),
    pathRule("must not end with '/.'", (v) => !v.endsWith("/.")),
    rule<PathMatchValue>(
      "type must be one of ['Exact', 'PathPrefix', 'RegularExpression']",
      (self) => exactOrPrefix(self) || self.type === "RegularExpression"
    ),
    rule<PathMatchValue>(
      `must only contain valid characters (matching ${PATH_CHARACTERS}) for types ['Exact', 'PathPrefix']`,
      (self) => (exactOrPrefix(self) ? new RegExp(PATH_CHARACTERS).test(self.value) : true)
    )
  ]
}

const HTTP_METHODS = ["GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE", "PATCH"] as const

type BackendRefValue = { readonly group: string; readonly kind: string; readonly port?: number }

const backendRefsSchema: ArraySchema = {
  type: "array",
  maxItems: 16,
  items: {
    type: "object",
    required: ["name"],
    properties: {
      group: groupSchema(""),
      kind: kindSchema("Service"),
      name: objectNameSchema,
      namespace: namespaceSchema,
      port: portNumberSchema,
      weight: { type: "integer", minimum: 0, maximum: 1000000, default: 1 }
    },
    rules: [
      rule<BackendRefValue>(
        "Must have port for Service reference",
        (self) => (self.group.length === 0 && self.kind === "Service" ? self.port !== undefined : true)
      )
    ]
  }
}

type RuleValue = { readonly matches?: ReadonlyArray<unknown> }

/** The HTTPRoute v1 CRD (standard channel), reduced to the fields session routing reads or writes. */
const httpRouteSchema: ObjectSchema = {
  type: "object",
  required: ["spec"],
  properties: {
    apiVersion: { type: "string" },
    kind: { type: "string" },
    spec: {
      type: "object",
      properties: {
        hostnames: { type: "array", maxItems: 16, items: hostnameSchema },
        parentRefs: parentRefsSchema,
        rules: {
          type: "array",
          maxItems: 16,
          default: [{ matches: [{ path: { type: "PathPrefix", value: "/" } }] }],
          items: {
            type: "object",
            properties: {
              name: sectionNameSchema,
              matches: {
                type: "array",
                maxItems: 64,
                default: [{ path: { type: "PathPrefix", value: "/" } }],
                items: {
                  type: "object",
                  properties: {
                    path: pathMatchSchema,
                    method: { type: "string", enum: HTTP_METHODS }
                  }
                }
              },
              backendRefs: backendRefsSchema
            }
          },
          rules: [
            rule<ReadonlyArray<RuleValue>>(
              "While 16 rules and 64 matches per rule are allowed, the total number of matches across all rules in a route must be less than 128",
              (self) => self.reduce((sum, r) => sum + (r.matches?.length ?? 0), 0) <= 128
            )
          ]
        }
      }
    }
  }
}

type ListenerValue = {
  readonly name?: string
  readonly port?: number
  readonly protocol?: string
  readonly hostname?: string
  readonly tls?: { readonly mode?: string }
}

const listenersOnly = (self: ReadonlyArray<ListenerValue>, protocols: ReadonlyArray<string>, ok: (l: ListenerValue) => boolean) =>
  self.every((l) => (protocols.includes(l.protocol ?? "") ? ok(l) : true))

/** The Gateway v1 CRD (standard channel), reduced to gatewayClassName and listeners. */
const gatewaySchema: ObjectSchema = {
  type: "object",
  required: ["spec"],
  properties: {
    apiVersion: { type: "string" },
    kind: { type: "string" },
    spec: {
      type: "object",
      required: ["gatewayClassName", "listeners"],
      properties: {
        gatewayClassName: objectNameSchema,
        listeners: {
          type: "array",
          minItems: 1,
          maxItems: 64,
          mapKeys: ["name"],
          items: {
            type: "object",
            required: ["name", "port", "protocol"],
            properties: {
              name: sectionNameSchema,
              hostname: hostnameSchema,
              port: portNumberSchema,
              protocol: { type: "string", minLength: 1, maxLength: 255, pattern: PROTOCOL_PATTERN },
              tls: {
                type: "object",
                properties: { mode: { type: "string", enum: ["Terminate", "Passthrough"], default: "Terminate" } }
              },
              allowedRoutes: {
                type: "object",
                default: { namespaces: { from: "Same" } },
                properties: {
                  namespaces: {
                    type: "object",
                    default: { from: "Same" },
                    properties: {
                      from: { type: "string", enum: ["All", "Selector", "Same"], default: "Same" }
                    }
                  },
                  kinds: {
                    type: "array",
                    maxItems: 8,
                    items: {
                      type: "object",
                      required: ["kind"],
                      properties: { group: groupSchema(), kind: kindSchema() }
                    }
                  }
                }
              }
            }
          },
          rules: [
            rule<ReadonlyArray<ListenerValue>>(
              "tls must not be specified for protocols ['HTTP', 'TCP', 'UDP']",
              (self) => listenersOnly(self, ["HTTP", "TCP", "UDP"], (l) => l.tls === undefined)
            ),
            rule<ReadonlyArray<ListenerValue>>(
              "tls mode must be Terminate for protocol HTTPS",
              (self) =>
                listenersOnly(self, ["HTTPS"], (l) => l.tls === undefined || l.tls.mode === "" || l.tls.mode === "Terminate")
            ),
            rule<ReadonlyArray<ListenerValue>>(
              "hostname must not be specified for protocols ['TCP', 'UDP']",
              (self) => listenersOnly(self, ["TCP", "UDP"], (l) => (l.hostname ?? "") === "")
            ),
            rule<ReadonlyArray<ListenerValue>>(
              "Listener name must be unique within the Gateway",
              (self) => self.every((l1) => self.filter((l2) => l1.name === l2.name).length === 1)
            ),
            rule<ReadonlyArray<ListenerValue>>(
              "Combination of port, protocol and hostname must be unique for each listener",
              (self) =>
                self.every(
                  (l1) =>
                    self.filter(
                      (l2) =>
                        l1.port === l2.port &&
                        l1.protocol === l2.protocol &&
                        (l1.hostname !== undefined && l2.hostname !== undefined
                          ? l1.hostname === l2.hostname
                          : l1.hostname === undefined && l2.hostname === undefined)
                    ).length === 1
                )
            )
          ]
        }
      }
    }
  }
}

/** The CRD schema of a Gateway API type LocalCluster serves; undefined for the built-in types. */
export const schemaFor = (resource: ResourceType<unknown>): ObjectSchema | undefined => {
  if (resource.group !== "gateway.networking.k8s.io") return undefined
  if (resource.kind === "HTTPRoute") return httpRouteSchema
  if (resource.kind === "Gateway") return gatewaySchema
  return undefined
}
