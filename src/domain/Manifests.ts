/**
 * The objects published for a session: a Service, then one Ingress or one
 * HTTPRoute per tcp port. Each builder returns a plain object a real API server
 * accepts unchanged, labelled for the session and owned by the session Pod.
 */
import type { HttpRoute, Ingress, IngressRule, KubeObject, OwnerReference, Service } from "./Objects.js"
import { apiVersionOf, HttpRouteResource, IngressResource, ServiceResource } from "./Resources.js"
import { hostForPort, type RoutingMode } from "./Routes.js"
import { OBJECT_PREFIX, type PortMapping } from "./Session.js"

export const LABEL_MANAGED_BY = "app.kubernetes.io/managed-by"
/**
 * The label every object of a session carries, with the session id as its value.
 *
 * @since 0.1.0
 * @category constants
 */
export const LABEL_SESSION_ID = "telo.run/session-id"
export const LABEL_PORT = "telo.run/port"
export const GATEWAY_API_GROUP = "gateway.networking.k8s.io"

/**
 * A Gateway reference: where HTTPRoutes attach.
 *
 * @since 0.1.0
 * @category models
 */
export interface GatewayRef {
  readonly name: string
  /** The Gateway's namespace; defaults to the session namespace. */
  readonly namespace: string
  /** A listener name, when routes attach to one listener only. */
  readonly sectionName?: string
}

/**
 * The settings the manifests depend on (a subset of RouterConfig).
 *
 * @since 0.1.0
 * @category models
 */
export interface ManifestSettings {
  readonly sessionNamespace: string
  readonly managedBy: string
  readonly baseDomain: string
  readonly ingressClassName?: string
  readonly tlsSecretName?: string
  readonly gateway?: GatewayRef
}

/**
 * The session whose objects are built.
 *
 * @since 0.1.0
 * @category models
 */
export interface SessionSpec {
  readonly sessionId: string
  readonly podName: string
  readonly podUid: string
  readonly ports: ReadonlyArray<PortMapping>
}

/**
 * `telo-run-<id>`: the Service, and the Ingress, of a session.
 *
 * @since 0.1.0
 * @category rules
 */
export const sessionObjectName = (sessionId: string): string => `${OBJECT_PREFIX}${sessionId}`

/** `telo-run-<id>-<port>`: one HTTPRoute per tcp port. */
export const httpRouteName = (sessionId: string, port: number): string => `${OBJECT_PREFIX}${sessionId}-${port}`

/** Selects every object of one session. */
export const sessionSelector = (sessionId: string): string => `${LABEL_SESSION_ID}=${sessionId}`

/**
 * Selects the objects of one session that this runner manages: what cleanup may
 * remove. The session label alone is not enough: anyone may put it on an object.
 */
export const managedSessionSelector = (managedBy: string, sessionId: string): string =>
  `${LABEL_MANAGED_BY}=${managedBy},${sessionSelector(sessionId)}`

/**
 * Why cleanup must leave an object it selected, or undefined when it is ours to
 * remove: every object a publish writes is owned by its session Pod.
 */
export const notOwnedReason = (object: KubeObject): string | undefined =>
  (object.metadata?.ownerReferences ?? []).some((ref) => ref.apiVersion === "v1" && ref.kind === "Pod")
    ? undefined
    : "it carries the session's labels but no owner reference to a Pod, so it was not published by a runner"

/** The Pods among an object's owners. */
const podOwners = (object: KubeObject): ReadonlyArray<OwnerReference> =>
  (object.metadata?.ownerReferences ?? []).filter((ref) => ref.apiVersion === "v1" && ref.kind === "Pod")

/**
 * Why a publish must not take over `live`, the object already at the name of one it
 * writes (`written`), or undefined when it is ours: labelled with the same runner and
 * session, and owned by the same Pod. Another manager's fields on an object of ours (an
 * earlier version's, a `kubectl edit`) are ours to overwrite; on anything else they
 * are someone's, and writing would silently take their object: a user's object at one
 * of our names, or another Pod's session of the same id, whose Pod would then lose
 * its routes and be collected with the wrong Pod.
 */
export const notOursToTakeOver = (live: KubeObject, written: KubeObject): string | undefined => {
  const labels = live.metadata?.labels ?? {}
  const wanted = written.metadata?.labels ?? {}
  for (const key of [LABEL_MANAGED_BY, LABEL_SESSION_ID]) {
    if (labels[key] !== wanted[key]) {
      return labels[key] === undefined
        ? `it has no ${key} label, so it was not published by this runner`
        : `its ${key} label is ${JSON.stringify(labels[key])}, not ${JSON.stringify(wanted[key])}`
    }
  }
  const owner = podOwners(written)[0]
  const other = podOwners(live).find((ref) => owner === undefined || ref.uid !== owner.uid)
  if (other !== undefined && owner !== undefined) {
    return `it belongs to Pod ${other.name} (uid ${other.uid}), not to Pod ${owner.name} (uid ${owner.uid}): ` +
      `another Pod has session ${
        labels[LABEL_SESSION_ID]
      }; unpublish it (or delete that Pod) first, or use another session id`
  }
  return notOwnedReason(live)
}

/** Selects every object one runner manages (its `app.kubernetes.io/managed-by` value), every session's. */
export const managedBySelector = (managedBy: string): string => `${LABEL_MANAGED_BY}=${managedBy}`

export const sessionLabels = (settings: ManifestSettings, sessionId: string): Record<string, string> => ({
  [LABEL_MANAGED_BY]: settings.managedBy,
  [LABEL_SESSION_ID]: sessionId
})

/** The Pod owns every routing object, so the cluster collects them when the Pod goes. */
export const podOwnerReference = (podName: string, podUid: string): OwnerReference => ({
  apiVersion: "v1",
  kind: "Pod",
  name: podName,
  uid: podUid,
  controller: true,
  blockOwnerDeletion: true
})

const metadataFor = (
  settings: ManifestSettings,
  spec: SessionSpec,
  name: string,
  extraLabels: Record<string, string> = {}
) => ({
  name,
  namespace: settings.sessionNamespace,
  labels: { ...sessionLabels(settings, spec.sessionId), ...extraLabels },
  ownerReferences: [podOwnerReference(spec.podName, spec.podUid)]
})

const tcpPorts = (ports: ReadonlyArray<PortMapping>) => ports.filter((p) => p.protocol === "tcp")

/**
 * Service port names must be unique; a port open as both tcp and udp gets
 * `p<port>` for tcp and `p<port>-udp` for udp.
 */
export const servicePortName = (mapping: PortMapping, ports: ReadonlyArray<PortMapping>): string =>
  mapping.protocol === "udp" && ports.some((p) => p.port === mapping.port && p.protocol === "tcp")
    ? `p${mapping.port}-udp`
    : `p${mapping.port}`

/**
 * The ClusterIP Service every route of the session points at.
 *
 * @since 0.1.0
 * @category rules
 */
export const buildSessionService = (settings: ManifestSettings, spec: SessionSpec): Service => ({
  apiVersion: apiVersionOf(ServiceResource),
  kind: ServiceResource.kind,
  metadata: metadataFor(settings, spec, sessionObjectName(spec.sessionId)),
  spec: {
    type: "ClusterIP",
    selector: { [LABEL_SESSION_ID]: spec.sessionId },
    ports: spec.ports.map((p) => ({
      name: servicePortName(p, spec.ports),
      port: p.port,
      targetPort: p.port,
      protocol: p.protocol === "tcp" ? "TCP" : "UDP"
    }))
  }
})

/**
 * One Ingress carries every host of the session: an Ingress rule is scoped to its
 * host, so per-host backends fit in one object. No tcp port → no rules (the
 * router deletes the Ingress then, rather than publish an empty one).
 *
 * @since 0.1.0
 * @category rules
 */
export const buildSessionIngress = (
  settings: ManifestSettings,
  spec: SessionSpec
): { readonly ingress: Ingress; readonly hosts: ReadonlyArray<string> } => {
  const service = sessionObjectName(spec.sessionId)
  const rules: ReadonlyArray<IngressRule & { readonly host: string }> = tcpPorts(spec.ports).map((p) => ({
    host: hostForPort(settings.baseDomain, spec.sessionId, p.port),
    http: {
      paths: [{ path: "/", pathType: "Prefix", backend: { service: { name: service, port: { number: p.port } } } }]
    }
  }))
  const hosts = rules.map((r) => r.host)
  const ingress: Ingress = {
    apiVersion: apiVersionOf(IngressResource),
    kind: IngressResource.kind,
    metadata: metadataFor(settings, spec, sessionObjectName(spec.sessionId)),
    spec: {
      ...(settings.ingressClassName !== undefined ? { ingressClassName: settings.ingressClassName } : {}),
      // The configured certificate (typically a wildcard for *.<baseDomain>) lets an
      // upstream that validates the origin reach it; without a host it secures nothing.
      ...(settings.tlsSecretName !== undefined && hosts.length > 0
        ? { tls: [{ hosts, secretName: settings.tlsSecretName }] }
        : {}),
      rules
    }
  }
  return { ingress, hosts }
}

/**
 * One HTTPRoute per tcp port. Per-port routes (unlike one Ingress) let a Gateway
 * accept or refuse each host on its own, and give each host its own status.
 *
 * @since 0.1.0
 * @category rules
 */
export const buildSessionHttpRoutes = (settings: ManifestSettings, spec: SessionSpec): ReadonlyArray<HttpRoute> => {
  const gateway = settings.gateway
  if (gateway === undefined) return []
  const service = sessionObjectName(spec.sessionId)
  return tcpPorts(spec.ports).map((p) => ({
    apiVersion: apiVersionOf(HttpRouteResource),
    kind: HttpRouteResource.kind,
    metadata: metadataFor(settings, spec, httpRouteName(spec.sessionId, p.port), { [LABEL_PORT]: String(p.port) }),
    spec: {
      parentRefs: [
        {
          group: GATEWAY_API_GROUP,
          kind: "Gateway",
          namespace: gateway.namespace,
          name: gateway.name,
          ...(gateway.sectionName !== undefined ? { sectionName: gateway.sectionName } : {})
        }
      ],
      hostnames: [hostForPort(settings.baseDomain, spec.sessionId, p.port)],
      rules: [
        {
          matches: [{ path: { type: "PathPrefix", value: "/" } }],
          backendRefs: [{ name: service, port: p.port }]
        }
      ]
    }
  }))
}

/**
 * Everything a mode publishes for the session, in apply order (Service first).
 *
 * @since 0.1.0
 * @category rules
 */
export const buildSessionObjects = (
  mode: RoutingMode,
  settings: ManifestSettings,
  spec: SessionSpec
): ReadonlyArray<KubeObject> => {
  // A ClusterIP Service without ports is refused (`spec.ports: Required value`), and
  // a session without ports has nothing to route.
  if (mode === "none" || spec.ports.length === 0) return []
  switch (mode) {
    case "ingress": {
      const { ingress, hosts } = buildSessionIngress(settings, spec)
      return [buildSessionService(settings, spec), ...(hosts.length > 0 ? [ingress] : [])]
    }
    case "gateway":
      return [buildSessionService(settings, spec), ...buildSessionHttpRoutes(settings, spec)]
  }
}
