/**
 * The diagnosis rules, table by table: each broken link of an Ingress's or an
 * HTTPRoute's routing named by its code, the first one winning, and the controller's
 * silence once every link holds; and each link's whole reason as a person reads it,
 * with the parts that depend on what was read (a condition's reason and message, or
 * its absence; a listener without hostname; no listeners at all), counting only the
 * current conditions (any, when the object keeps no generation).
 */
import { describe, expect, it } from "@effect/vitest"
import {
  atDeadline,
  causeReason,
  deadlineReason,
  DEFAULT_INGRESS_CLASS_ANNOTATION,
  DIAGNOSIS_CODES,
  ingressControllerAdvice,
  ingressPath,
  ingressUnclaimedAdvice,
  isDefaultIngressClass,
  ROUTING_OFF_ADVICE,
  RoutingPath
} from "../../src/domain/Diagnosis.js"
import {
  type GatewayFacts,
  gatewayNeedsNamespaceLabels,
  gatewayPath,
  gatewayUnclaimedAdvice
} from "../../src/domain/GatewayPath.js"
import type { Condition, Gateway, GatewayClass, GatewayListener, IngressClass } from "../../src/domain/Objects.js"

const codeOf = (path: RoutingPath): string =>
  path._tag === "Broken" ? path.cause.code : path._tag === "Sound" ? path.silence.code : "unread"

/** The reason a host unprogrammed at the deadline carries, for a path. */
const reasonOf = (path: RoutingPath): string => deadlineReason(path, "ADVICE")

const ingressClass = (name: string, controller: string, isDefault = false): IngressClass => ({
  metadata: { name, ...(isDefault ? { annotations: { [DEFAULT_INGRESS_CLASS_ANNOTATION]: "true" } } : {}) },
  spec: { controller }
})

describe("an Ingress's routing, link by link", () => {
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

  it("says the cluster has no IngressClass at all when the named one is missing", () => {
    expect(reasonOf(ingressPath({ namespace: "ns", className: "nginx", classes: [] }))).toBe(
      "IngressClassNotFound: the session Ingress names IngressClass \"nginx\", which does not exist (the cluster has no IngressClass at all): set SESSION_INGRESS_CLASS to a class the cluster has, or install the ingress controller that provides \"nginx\""
    )
  })

  it("does not count a class annotated default \"false\" as the default", () => {
    const classes = [
      {
        metadata: { name: "a", annotations: { "ingressclass.kubernetes.io/is-default-class": "false" } },
        spec: { controller: "x" }
      },
      { metadata: { name: "b" } }
    ]
    expect(isDefaultIngressClass(classes[0]!)).toBe(false)
    expect(reasonOf(ingressPath({ namespace: "ns", className: undefined, classes }))).toBe(
      "NoDefaultIngressClass: no ingressClassName is configured and no IngressClass is marked default (the cluster has \"a\", \"b\"), so no controller claims the session Ingress: set SESSION_INGRESS_CLASS, or annotate one class ingressclass.kubernetes.io/is-default-class=\"true\""
    )
  })

  it("describes the named class without calling it the default", () => {
    expect(
      ingressPath({
        namespace: "ns",
        className: "a",
        classes: [{ metadata: { name: "a" }, spec: { controller: "example.com/x" } }]
      })
    ).toEqual(RoutingPath.sound("IngressClass \"a\", controller \"example.com/x\"", {
      code: "NoIngressStatus",
      message:
        "IngressClass \"a\", controller \"example.com/x\", exists, but no address was written to the session Ingress's status in namespace \"ns\": check that the controller \"example.com/x\" is running, watches this namespace, and is configured to publish an address in Ingress status (most controllers need the Service or address that fronts them named)"
    }))
  })

  it("names both default classes, in the order the cluster lists them", () => {
    const classes = [
      { metadata: { name: "x", annotations: { "ingressclass.kubernetes.io/is-default-class": "true" } } },
      { metadata: { name: "y" } },
      { metadata: { name: "z", annotations: { "ingressclass.kubernetes.io/is-default-class": "true" } } }
    ]
    expect(reasonOf(ingressPath({ namespace: "ns", className: undefined, classes }))).toBe(
      "MultipleDefaultIngressClasses: no ingressClassName is configured and 2 IngressClasses are marked default (\"x\", \"z\"), so which controller claims the session Ingress is ambiguous: set SESSION_INGRESS_CLASS to one of them, or leave one default"
    )
  })
})

const condition = (
  type: string,
  status: Condition["status"],
  reason: string,
  message = `${type} is ${status}`,
  observedGeneration?: number
): Condition => ({
  type,
  status,
  reason,
  message,
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

/**
 * A Gateway of generation 2 (`null`: one that keeps no generation); a condition given
 * without observedGeneration is stamped with the Gateway's.
 */
const gateway = (
  listeners: ReadonlyArray<GatewayListener>,
  conditions: ReadonlyArray<Condition> = [accepted, programmed],
  generation: number | null = 2
): Gateway => ({
  metadata: { name: "gw", namespace: "infra", ...(generation !== null ? { generation } : {}) },
  spec: { gatewayClassName: "cls", listeners },
  status: {
    conditions: generation === null
      ? conditions
      : conditions.map((c) => ({ ...c, observedGeneration: c.observedGeneration ?? generation }))
  }
})

const gatewayClass = (conditions: ReadonlyArray<Condition> = [accepted]): GatewayClass => ({
  metadata: { name: "cls", generation: 1 },
  spec: { controllerName: "example.com/gateway" },
  status: { conditions }
})

const allowing = (from: "Same" | "All" | "Selector", matchLabels?: Record<string, string>) => ({
  allowedRoutes: { namespaces: { from, ...(matchLabels !== undefined ? { selector: { matchLabels } } : {}) } }
})
const all = allowing("All")

const HOST = "8080-s1.sessions.example.com"

const facts = (overrides: Partial<GatewayFacts> = {}): GatewayFacts => ({
  target: { namespace: "infra", name: "gw" },
  routeNamespace: "sessions",
  gateway: gateway([listener(allowing("All"))]),
  gatewayClass: gatewayClass(),
  ...overrides
})

describe("an HTTPRoute's routing through its Gateway, link by link", () => {
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
        gateway: gateway([listener(allowing("All"))], [
          condition("Accepted", "True", "Accepted", undefined, 1),
          programmed
        ])
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

  it("needs no namespace labels for a Gateway without spec", () => {
    expect(gatewayNeedsNamespaceLabels({ metadata: { name: "gw" } })).toBe(false)
  })
})

describe("the whole reason of each Gateway link, as a person reads it", () => {
  it("names the missing Gateway and how to point at another", () => {
    expect(reasonOf(gatewayPath(facts({ gateway: undefined }), HOST))).toBe(
      "GatewayNotFound: Gateway infra/gw does not exist: create it, or set SESSION_GATEWAY_NAME and SESSION_GATEWAY_NAMESPACE to an existing Gateway (kubectl get gateways -A)"
    )
  })

  it("names the missing GatewayClass the Gateway names", () => {
    expect(reasonOf(gatewayPath(facts({ gatewayClass: undefined }), HOST))).toBe(
      "GatewayClassNotFound: Gateway infra/gw names GatewayClass \"cls\", which does not exist: install the Gateway implementation that provides it, or set the Gateway's gatewayClassName to an installed class (kubectl get gatewayclasses)"
    )
  })

  it("quotes a refused GatewayClass's reason and trimmed message, or its reason alone when the message is blank", () => {
    expect(
      reasonOf(gatewayPath(
        facts({ gatewayClass: gatewayClass([condition("Accepted", "False", "InvalidParameters", "  bad params  ")]) }),
        HOST
      ))
    ).toBe(
      "GatewayClassNotAccepted: GatewayClass \"cls\" was refused by its controller \"example.com/gateway\" (InvalidParameters: bad params): fix the class's parameters"
    )
    expect(
      reasonOf(gatewayPath(
        facts({ gatewayClass: gatewayClass([condition("Accepted", "False", "InvalidParameters", " ")]) }),
        HOST
      ))
    ).toBe(
      "GatewayClassNotAccepted: GatewayClass \"cls\" was refused by its controller \"example.com/gateway\" (InvalidParameters): fix the class's parameters"
    )
  })

  it("says no controller accepted the GatewayClass, quoting an Unknown condition when there is one", () => {
    expect(
      reasonOf(gatewayPath(
        facts({
          gatewayClass: gatewayClass([condition("Accepted", "Unknown", "Pending", "Waiting for controller")])
        }),
        HOST
      ))
    ).toBe(
      "GatewayClassNotAccepted: GatewayClass \"cls\" names controller \"example.com/gateway\", and no controller has accepted it (Accepted: Unknown, Pending: Waiting for controller): install or start the Gateway implementation whose controllerName is \"example.com/gateway\""
    )
    expect(reasonOf(gatewayPath(facts({ gatewayClass: gatewayClass([]) }), HOST))).toBe(
      "GatewayClassNotAccepted: GatewayClass \"cls\" names controller \"example.com/gateway\", and no controller has accepted it: install or start the Gateway implementation whose controllerName is \"example.com/gateway\""
    )
  })

  it("says the Gateway was refused, pending, or never reconciled", () => {
    expect(
      reasonOf(
        gatewayPath(facts({ gateway: gateway([], [condition("Accepted", "False", "ListenersNotValid", "")]) }), HOST)
      )
    ).toBe(
      "GatewayNotAccepted: Gateway infra/gw was not accepted by \"example.com/gateway\" (ListenersNotValid): fix the Gateway's listeners or parameters"
    )
    expect(reasonOf(gatewayPath(facts({ gateway: gateway([], [condition("Accepted", "Unknown", "Pending")]) }), HOST)))
      .toBe(
        "GatewayNotAccepted: Gateway infra/gw has not been accepted by \"example.com/gateway\" yet (Accepted: Unknown, Pending: Accepted is Unknown): check that the controller runs and look at its logs for this Gateway"
      )
    expect(reasonOf(gatewayPath(facts({ gateway: gateway([], []) }), HOST))).toBe(
      "GatewayNotAccepted: Gateway infra/gw has not been accepted by \"example.com/gateway\" yet (no current Accepted condition): check that the controller runs and look at its logs for this Gateway"
    )
  })

  it("counts a condition of a newer generation, and any condition of an object that keeps no generation", () => {
    const newer = [
      condition("Accepted", "True", "Accepted", "", 3),
      condition("Programmed", "True", "Programmed", "", 3)
    ]
    expect(reasonOf(gatewayPath(facts({ gateway: gateway([], newer) }), HOST))).toMatch(/^NoMatchingParent: /)
    const old = [condition("Accepted", "True", "Accepted", "", 1), condition("Programmed", "True", "Programmed", "", 1)]
    expect(reasonOf(gatewayPath(facts({ gateway: gateway([], old) }), HOST))).toMatch(/^GatewayNotAccepted: /)
    expect(reasonOf(gatewayPath(facts({ gateway: gateway([], old, null) }), HOST))).toMatch(/^NoMatchingParent: /)
  })

  it("says the Gateway is not programmed, with the controller's reason or without a condition", () => {
    expect(reasonOf(gatewayPath(facts({ gateway: gateway([], [accepted]) }), HOST))).toBe(
      "GatewayNotProgrammed: Gateway infra/gw is accepted but not Programmed (no current Programmed condition): its data plane has no address or is not ready; look at the Gateway's status and the controller's logs"
    )
    expect(
      reasonOf(gatewayPath(
        facts({ gateway: gateway([], [accepted, condition("Programmed", "False", "AddressNotAssigned", "")]) }),
        HOST
      ))
    ).toBe(
      "GatewayNotProgrammed: Gateway infra/gw is accepted but not Programmed (AddressNotAssigned): its data plane has no address or is not ready; look at the Gateway's status and the controller's logs"
    )
  })

  it("says a Gateway has no listeners at all, whether or not a sectionName is set", () => {
    expect(reasonOf(gatewayPath(facts({ gateway: gateway([]) }), HOST))).toBe(
      "NoMatchingParent: Gateway infra/gw has no listeners: add one for HTTP or HTTPS"
    )
    expect(
      reasonOf(gatewayPath(
        facts({ target: { namespace: "infra", name: "gw", sectionName: "https" }, gateway: gateway([]) }),
        HOST
      ))
    ).toBe(
      "NoMatchingParent: Gateway infra/gw has no listener named \"https\" (SESSION_GATEWAY_SECTION); its listeners are none: set SESSION_GATEWAY_SECTION to one of them, or unset it"
    )
  })

  it("lists the listeners that carry no HTTPRoute, a hostname-less one as *", () => {
    const listeners: ReadonlyArray<GatewayListener> = [
      { name: "tcp", protocol: "TCP", port: 9000, ...all },
      { name: "tls", protocol: "TLS", port: 443, hostname: "a.example.com", ...all }
    ]
    expect(reasonOf(gatewayPath(facts({ gateway: gateway(listeners) }), HOST))).toBe(
      "NotAllowedByListeners: no listener of Gateway infra/gw carries HTTPRoutes (\"tcp\" (TCP *), \"tls\" (TLS a.example.com)): add an HTTP or HTTPS listener"
    )
  })

  it("reads only the listener the sectionName names", () => {
    const listeners: ReadonlyArray<GatewayListener> = [
      { name: "tcp", protocol: "TCP", port: 9000, ...all },
      { name: "http", protocol: "HTTP", port: 80, ...all }
    ]
    const path = gatewayPath(
      facts({ target: { namespace: "infra", name: "gw", sectionName: "tcp" }, gateway: gateway(listeners) }),
      HOST
    )
    expect(reasonOf(path)).toBe(
      "NotAllowedByListeners: no listener of Gateway infra/gw carries HTTPRoutes (\"tcp\" (TCP *)): add an HTTP or HTTPS listener"
    )
  })

  it("names every listener hostname when none covers the host, and the wildcard that would", () => {
    const listeners: ReadonlyArray<GatewayListener> = [
      { name: "a", protocol: "HTTP", port: 80, hostname: "*.other.example.com", ...all },
      { name: "b", protocol: "HTTP", port: 80, hostname: "x.sessions.example.com", ...all },
      // Admits no route from the session namespace, so its hostname is not listed.
      { name: "c", protocol: "HTTP", port: 80, hostname: "*.third.example.com" }
    ]
    expect(reasonOf(gatewayPath(facts({ gateway: gateway(listeners) }), HOST))).toBe(
      "NoMatchingListenerHostname: no listener of Gateway infra/gw that admits namespace \"sessions\" covers 8080-s1.sessions.example.com (listener hostnames: *.other.example.com, x.sessions.example.com): add a listener for *.sessions.example.com or change SESSION_ROUTING_BASE_DOMAIN"
    )
  })

  it("names every listener that admits and covers the route, and only those", () => {
    const listeners: ReadonlyArray<GatewayListener> = [
      { name: "a", protocol: "HTTP", port: 80, ...all },
      { name: "b", protocol: "HTTPS", port: 443, hostname: "*.sessions.example.com", ...all },
      { name: "c", protocol: "HTTP", port: 80, hostname: "*.other.com", ...all },
      { name: "d", protocol: "HTTP", port: 80 }
    ]
    const path = gatewayPath(facts({ gateway: gateway(listeners) }), HOST)
    expect(path._tag === "Sound" && path.summary).toBe(
      "Gateway infra/gw (GatewayClass \"cls\", controller \"example.com/gateway\") is Accepted and Programmed; listener \"a\" (HTTP *), \"b\" (HTTPS *.sessions.example.com) admits the route"
    )
  })

  it("lists every label of a selector that does not admit the namespace", () => {
    const listeners: ReadonlyArray<GatewayListener> = [
      {
        name: "team",
        protocol: "HTTP",
        port: 80,
        allowedRoutes: { namespaces: { from: "Selector", selector: { matchLabels: { team: "a", tier: "web" } } } }
      }
    ]
    expect(reasonOf(gatewayPath(facts({ gateway: gateway(listeners), routeNamespaceLabels: { team: "a" } }), HOST)))
      .toBe(
        "NotAllowedByListeners: no listener of Gateway infra/gw admits HTTPRoutes from namespace \"sessions\" (allowedRoutes.namespaces.from \"team\": Selector team=a,tier=web; the Gateway is in namespace \"infra\"): set allowedRoutes.namespaces.from to All, or to a Selector the namespace's labels match"
      )
  })

  it("admits a route through a listener whose Selector has no labels", () => {
    const listeners: ReadonlyArray<GatewayListener> = [
      { name: "s", protocol: "HTTPS", port: 443, allowedRoutes: { namespaces: { from: "Selector" } } }
    ]
    expect(reasonOf(gatewayPath(facts({ gateway: gateway(listeners), routeNamespaceLabels: {} }), HOST))).toMatch(
      /^NoRouteStatus: /
    )
  })
})

describe("the reason and code at the deadline", () => {
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

describe("the codes and the paths", () => {
  it("gives the codes in the order the links are read", () => {
    expect(DIAGNOSIS_CODES).toEqual([
      "IngressClassNotFound",
      "NoDefaultIngressClass",
      "MultipleDefaultIngressClasses",
      "NoIngressStatus",
      "GatewayNotFound",
      "GatewayClassNotFound",
      "GatewayClassNotAccepted",
      "GatewayNotAccepted",
      "GatewayNotProgrammed",
      "NoMatchingParent",
      "NotAllowedByListeners",
      "NoMatchingListenerHostname",
      "NoRouteStatus"
    ])
  })

  it("builds each path and reads its reason", () => {
    expect(RoutingPath.broken("GatewayNotFound", "gone")).toEqual({
      _tag: "Broken",
      cause: { code: "GatewayNotFound", message: "gone" }
    })
    expect(RoutingPath.unread("Gateway infra/gw", "forbidden")).toEqual({
      _tag: "Unread",
      what: "Gateway infra/gw",
      reason: "forbidden"
    })
    const silence = { code: "NoRouteStatus", message: "quiet" } as const
    expect(RoutingPath.sound("fine", silence)).toEqual({ _tag: "Sound", summary: "fine", silence })
    expect(causeReason(silence)).toBe("NoRouteStatus: quiet")
    expect(deadlineReason(RoutingPath.sound("fine", silence), "ADVICE")).toBe("NoRouteStatus: quiet")
  })
})

describe("the advice a host still pending at its deadline gets when nothing more is known", () => {
  it("names the Ingress class that should have claimed it, or says only a default class's controller would", () => {
    expect(ingressUnclaimedAdvice("telo-sessions", "nginx")).toBe(
      `no ingress controller claimed the session Ingress of class "nginx" in namespace "telo-sessions": check that an ingress controller for that class is running and watching the namespace, and that it publishes status (ingress-nginx needs --update-status, Traefik an ingressEndpoint, Kong and APISIX a publishService)`
    )
    expect(ingressUnclaimedAdvice("telo-sessions", undefined)).toMatch(
      /^no ingress controller claimed the session Ingress \(no ingressClassName is configured, so only a default IngressClass's controller would\) in namespace "telo-sessions": /
    )
  })

  it("names the Gateway, its listener when one is configured, the namespace and the domain a listener must cover", () => {
    const target = { namespace: "infra", name: "gw" }
    expect(gatewayUnclaimedAdvice({ ...target, sectionName: "https" }, "telo-sessions", "telo.run", "8080-a.telo.run"))
      .toBe(
        `no Gateway controller accepted the HTTPRoute for 8080-a.telo.run on Gateway infra/gw (listener "https"): check that the Gateway exists and is Programmed, that its listeners allow routes from namespace "telo-sessions" (allowedRoutes.namespaces.from defaults to Same), and that a listener hostname covers *.telo.run`
      )
    expect(gatewayUnclaimedAdvice(target, "telo-sessions", "telo.run", "8080-a.telo.run")).toContain(
      "on Gateway infra/gw: check"
    )
  })

  it("says routing is off in mode none", () => {
    expect(ROUTING_OFF_ADVICE).toBe(
      "session routing is off (SESSION_ROUTING_MODE=none, or no base domain): nothing publishes this host"
    )
  })
})
