/**
 * The diagnosis rules, table by table: each broken link of an Ingress's or an
 * HTTPRoute's routing named by its code, the first one winning, and the controller's
 * silence once every link holds.
 */
import { describe, expect, it } from "@effect/vitest"
import {
  atDeadline,
  causeReason,
  deadlineReason,
  DEFAULT_INGRESS_CLASS_ANNOTATION,
  DIAGNOSIS_CODES,
  type GatewayFacts,
  gatewayNeedsNamespaceLabels,
  gatewayPath,
  ingressControllerAdvice,
  ingressPath,
  type RoutingPath
} from "../../src/domain/Diagnosis.js"
import type { Condition, Gateway, GatewayClass, GatewayListener, IngressClass } from "../../src/domain/Objects.js"

const codeOf = (path: RoutingPath): string =>
  path._tag === "Broken" ? path.cause.code : path._tag === "Sound" ? path.silence.code : "unread"

const ingressClass = (name: string, controller: string, isDefault = false): IngressClass => ({
  metadata: { name, ...(isDefault ? { annotations: { [DEFAULT_INGRESS_CLASS_ANNOTATION]: "true" } } : {}) },
  spec: { controller }
})

describe("ingressPath", () => {
  const nginx = ingressClass("nginx", "k8s.io/ingress-nginx")
  const traefik = ingressClass("traefik", "traefik.io/ingress-controller", true)
  const table: ReadonlyArray<readonly [string, string | undefined, ReadonlyArray<IngressClass>, string]> = [
    ["the class named does not exist", "haproxy", [nginx], "IngressClassNotFound"],
    ["the class named does not exist in a cluster without classes", "nginx", [], "IngressClassNotFound"],
    ["no class is set and none is default", undefined, [nginx], "NoDefaultIngressClass"],
    [
      "no class is set and two are default",
      undefined,
      [traefik, ingressClass("b", "x", true)],
      "MultipleDefaultIngressClasses"
    ],
    ["the class named exists", "nginx", [nginx, traefik], "NoIngressStatus"],
    ["no class is set and one is default", undefined, [nginx, traefik], "NoIngressStatus"]
  ]
  for (const [when, className, classes, code] of table) {
    it(`says ${code} when ${when}`, () => {
      expect(codeOf(ingressPath({ namespace: "ns", className, classes }))).toBe(code)
    })
  }

  it("names the missing class and the ones the cluster has", () => {
    expect(ingressPath({ namespace: "ns", className: "haproxy", classes: [nginx, traefik] })).toEqual({
      _tag: "Broken",
      cause: {
        code: "IngressClassNotFound",
        message:
          "the session Ingress names IngressClass \"haproxy\", which does not exist (the cluster has \"nginx\", \"traefik\"): set SESSION_INGRESS_CLASS to a class the cluster has, or install the ingress controller that provides \"haproxy\""
      }
    })
  })

  it("names both default classes when two are marked default", () => {
    const path = ingressPath({
      namespace: "ns",
      className: undefined,
      classes: [traefik, ingressClass("b", "x", true)]
    })
    expect(path._tag === "Broken" && path.cause.message).toContain(
      "2 IngressClasses are marked default (\"traefik\", \"b\")"
    )
  })

  it("describes the default class it found, and the controller's silence with that controller's advice", () => {
    const path = ingressPath({ namespace: "ns", className: undefined, classes: [nginx, traefik] })
    expect(path._tag === "Sound" && path.summary).toBe(
      "IngressClass \"traefik\" (the default), controller \"traefik.io/ingress-controller\""
    )
    expect(path._tag === "Sound" && path.silence.message).toContain("providers.kubernetesIngress.ingressEndpoint")
    expect(path._tag === "Sound" && path.silence.message).toContain("namespace \"ns\"")
  })

  const advice: ReadonlyArray<readonly [string, string]> = [
    ["k8s.io/ingress-nginx", "--update-status"],
    ["k8s.io/ingress-nginx-internal", "--publish-service"],
    ["nginx.org/ingress-controller", "-report-ingress-status"],
    ["traefik.io/ingress-controller", "ingressEndpoint"],
    ["haproxy.org/ingress-controller/haproxy", "--publish-service"],
    ["haproxy-ingress.github.io/controller", "--publish-service"],
    ["ingress-controllers.konghq.com/kong", "CONTROLLER_PUBLISH_SERVICE"],
    ["apisix.apache.org/apisix-ingress-controller", "ingressPublishService"],
    ["projectcontour.io/ingress-controller", "--envoy-service-name"],
    ["istio.io/ingress-controller", "ingressControllerMode"],
    ["ingress.k8s.aws/alb", "IAM"],
    ["example.com/homegrown", "the controller \"example.com/homegrown\" is running"]
  ]
  for (const [controller, says] of advice) {
    it(`advises on ${controller} by its own settings`, () => {
      expect(ingressControllerAdvice(controller)).toContain(says)
    })
  }
})

const condition = (
  type: string,
  status: Condition["status"],
  reason: string,
  observedGeneration?: number
): Condition => ({
  type,
  status,
  reason,
  message: `${type} is ${status}`,
  lastTransitionTime: "2026-01-01T00:00:00Z",
  ...(observedGeneration !== undefined ? { observedGeneration } : {})
})

const accepted = condition("Accepted", "True", "Accepted")
const programmed = condition("Programmed", "True", "Programmed")

const listener = (overrides: Partial<GatewayListener> = {}): GatewayListener => ({
  name: "http",
  protocol: "HTTP",
  port: 80,
  hostname: "*.sessions.example.com",
  ...overrides
})

const gateway = (
  listeners: ReadonlyArray<GatewayListener>,
  conditions: ReadonlyArray<Condition> = [accepted, programmed]
): Gateway => ({
  metadata: { name: "gw", namespace: "infra", generation: 2 },
  spec: { gatewayClassName: "cls", listeners },
  status: { conditions: conditions.map((c) => ({ ...c, observedGeneration: c.observedGeneration ?? 2 })) }
})

const gatewayClass = (conditions: ReadonlyArray<Condition> = [accepted]): GatewayClass => ({
  metadata: { name: "cls", generation: 1 },
  spec: { controllerName: "example.com/gateway" },
  status: { conditions }
})

const allowing = (from: "Same" | "All" | "Selector", matchLabels?: Record<string, string>) => ({
  allowedRoutes: { namespaces: { from, ...(matchLabels !== undefined ? { selector: { matchLabels } } : {}) } }
})

const HOST = "8080-s1.sessions.example.com"

const facts = (overrides: Partial<GatewayFacts> = {}): GatewayFacts => ({
  target: { namespace: "infra", name: "gw" },
  routeNamespace: "sessions",
  gateway: gateway([listener(allowing("All"))]),
  gatewayClass: gatewayClass(),
  ...overrides
})

describe("gatewayPath", () => {
  const table: ReadonlyArray<readonly [string, GatewayFacts, string]> = [
    ["the Gateway does not exist", facts({ gateway: undefined }), "GatewayNotFound"],
    ["its GatewayClass does not exist", facts({ gatewayClass: undefined }), "GatewayClassNotFound"],
    [
      "its GatewayClass waits for a controller (the CRD default)",
      facts({ gatewayClass: gatewayClass([condition("Accepted", "Unknown", "Pending")]) }),
      "GatewayClassNotAccepted"
    ],
    ["its GatewayClass has no status at all", facts({ gatewayClass: gatewayClass([]) }), "GatewayClassNotAccepted"],
    [
      "its GatewayClass was refused",
      facts({ gatewayClass: gatewayClass([condition("Accepted", "False", "InvalidParameters")]) }),
      "GatewayClassNotAccepted"
    ],
    [
      "the Gateway was refused",
      facts({
        gateway: gateway([listener(allowing("All"))], [condition("Accepted", "False", "ListenersNotValid"), programmed])
      }),
      "GatewayNotAccepted"
    ],
    [
      "nobody reconciled the Gateway",
      facts({ gateway: gateway([listener(allowing("All"))], []) }),
      "GatewayNotAccepted"
    ],
    [
      "the Gateway's acceptance is for an older generation",
      facts({
        gateway: gateway([listener(allowing("All"))], [condition("Accepted", "True", "Accepted", 1), programmed])
      }),
      "GatewayNotAccepted"
    ],
    [
      "the Gateway is not programmed",
      facts({
        gateway: gateway([listener(allowing("All"))], [
          accepted,
          condition("Programmed", "False", "AddressNotAssigned")
        ])
      }),
      "GatewayNotProgrammed"
    ],
    [
      "the configured sectionName names no listener",
      facts({ target: { namespace: "infra", name: "gw", sectionName: "https" } }),
      "NoMatchingParent"
    ],
    ["the Gateway has no listeners", facts({ gateway: gateway([]) }), "NoMatchingParent"],
    [
      "no listener speaks HTTP",
      facts({ gateway: gateway([listener({ protocol: "TCP", ...allowing("All") })]) }),
      "NotAllowedByListeners"
    ],
    [
      "the listener admits its own namespace only (the default)",
      facts({ gateway: gateway([listener()]) }),
      "NotAllowedByListeners"
    ],
    [
      "the listener's selector does not match the namespace's labels",
      facts({ gateway: gateway([listener(allowing("Selector", { team: "a" }))]), routeNamespaceLabels: { team: "b" } }),
      "NotAllowedByListeners"
    ],
    [
      "no listener hostname covers the host",
      facts({ gateway: gateway([listener({ hostname: "*.other.example.com", ...allowing("All") })]) }),
      "NoMatchingListenerHostname"
    ],
    [
      "the listener hostname is the base domain itself, not a wildcard under it",
      facts({ gateway: gateway([listener({ hostname: "sessions.example.com", ...allowing("All") })]) }),
      "NoMatchingListenerHostname"
    ],
    ["every link holds", facts(), "NoRouteStatus"],
    [
      "routes from the Gateway's own namespace are admitted by Same",
      facts({ routeNamespace: "infra", gateway: gateway([listener()]) }),
      "NoRouteStatus"
    ],
    [
      "the selector matches the namespace's labels",
      facts({ gateway: gateway([listener(allowing("Selector", { team: "a" }))]), routeNamespaceLabels: { team: "a" } }),
      "NoRouteStatus"
    ],
    [
      "the selector matches the label every namespace carries",
      facts({ gateway: gateway([listener(allowing("Selector", { "kubernetes.io/metadata.name": "sessions" }))]) }),
      "NoRouteStatus"
    ],
    [
      "a listener without hostname covers every host",
      facts({ gateway: gateway([{ name: "any", protocol: "HTTP", port: 80, ...allowing("All") }]) }),
      "NoRouteStatus"
    ],
    [
      "the configured sectionName names the listener that admits it",
      facts({
        target: { namespace: "infra", name: "gw", sectionName: "open" },
        gateway: gateway([listener(), listener({ name: "open", ...allowing("All") })])
      }),
      "NoRouteStatus"
    ]
  ]
  for (const [when, given, code] of table) {
    it(`says ${code} when ${when}`, () => {
      expect(codeOf(gatewayPath(given, HOST))).toBe(code)
    })
  }

  it("reports the first broken link: a refused Gateway before listeners that would not admit the route", () => {
    const path = gatewayPath(
      facts({ gateway: gateway([listener()], [condition("Accepted", "False", "Invalid")]) }),
      HOST
    )
    expect(codeOf(path)).toBe("GatewayNotAccepted")
  })

  it("names the listeners the Gateway has when the sectionName matches none", () => {
    const path = gatewayPath(facts({ target: { namespace: "infra", name: "gw", sectionName: "https" } }), HOST)
    expect(path._tag === "Broken" && causeReason(path.cause)).toBe(
      "NoMatchingParent: Gateway infra/gw has no listener named \"https\" (SESSION_GATEWAY_SECTION); its listeners are \"http\": set SESSION_GATEWAY_SECTION to one of them, or unset it"
    )
  })

  it("says which namespaces each listener admits when none admits the session namespace", () => {
    const path = gatewayPath(
      facts({
        gateway: gateway([listener(), listener({ name: "team", ...allowing("Selector", { team: "a" }) })]),
        routeNamespaceLabels: {}
      }),
      HOST
    )
    expect(path._tag === "Broken" && causeReason(path.cause)).toBe(
      "NotAllowedByListeners: no listener of Gateway infra/gw admits HTTPRoutes from namespace \"sessions\" (allowedRoutes.namespaces.from \"http\": Same; \"team\": Selector team=a; the Gateway is in namespace \"infra\"): set allowedRoutes.namespaces.from to All, or to a Selector the namespace's labels match"
    )
  })

  it("keeps the controller's own reason when the Gateway is not programmed", () => {
    const path = gatewayPath(
      facts({
        gateway: gateway([listener(allowing("All"))], [
          accepted,
          condition("Programmed", "False", "AddressNotAssigned")
        ])
      }),
      HOST
    )
    expect(path._tag === "Broken" && path.cause.message).toContain("(AddressNotAssigned: Programmed is False)")
  })

  it("describes the sound path and blames the controller's silence on the route", () => {
    const path = gatewayPath(facts(), HOST)
    expect(path).toEqual({
      _tag: "Sound",
      summary:
        "Gateway infra/gw (GatewayClass \"cls\", controller \"example.com/gateway\") is Accepted and Programmed; listener \"http\" (HTTP *.sessions.example.com) admits the route",
      silence: {
        code: "NoRouteStatus",
        message:
          "Gateway infra/gw (GatewayClass \"cls\", controller \"example.com/gateway\") is Accepted and Programmed; listener \"http\" (HTTP *.sessions.example.com) admits the route, but \"example.com/gateway\" wrote no status for the HTTPRoute of 8080-s1.sessions.example.com: look at the controller's logs for this route, and check that it watches namespace \"sessions\""
      }
    })
  })

  it("needs the namespace's labels only when a listener selects namespaces by label", () => {
    expect(gatewayNeedsNamespaceLabels(gateway([listener(allowing("All")), listener()]))).toBe(false)
    expect(gatewayNeedsNamespaceLabels(gateway([listener(), listener(allowing("Selector", {}))]))).toBe(true)
  })
})

describe("deadlineReason", () => {
  const advice = "no Gateway controller accepted the HTTPRoute"

  it("gives a broken link's code and message", () => {
    expect(deadlineReason({ _tag: "Broken", cause: { code: "GatewayNotFound", message: "gone" } }, advice)).toBe(
      "GatewayNotFound: gone"
    )
  })

  it("gives the controller's silence when every link holds", () => {
    expect(deadlineReason(gatewayPath(facts(), HOST), advice)).toMatch(/^NoRouteStatus: /)
  })

  it("keeps the generic advice, saying what could not be read, when a read failed", () => {
    expect(deadlineReason({ _tag: "Unread", what: "Gateway infra/gw", reason: "forbidden" }, advice)).toBe(
      `${advice} (could not read Gateway infra/gw: forbidden)`
    )
  })

  it("codes a host unprogrammed at the deadline by its link, or as unclaimed when the links could not be read", () => {
    expect(atDeadline({ _tag: "Broken", cause: { code: "GatewayNotFound", message: "gone" } }, advice)).toEqual({
      reason: "GatewayNotFound: gone",
      code: "GatewayNotFound"
    })
    expect(atDeadline(gatewayPath(facts(), HOST), advice).code).toBe("NoRouteStatus")
    expect(atDeadline({ _tag: "Unread", what: "Gateway infra/gw", reason: "forbidden" }, advice)).toEqual({
      reason: `${advice} (could not read Gateway infra/gw: forbidden)`,
      code: "Unclaimed"
    })
  })

  it("knows every code a path can carry", () => {
    const seen = [
      ingressPath({ namespace: "ns", className: "x", classes: [] }),
      gatewayPath(facts({ gateway: undefined }), HOST),
      gatewayPath(facts(), HOST)
    ].map(codeOf)
    for (const code of seen) expect(DIAGNOSIS_CODES).toContain(code)
  })
})
