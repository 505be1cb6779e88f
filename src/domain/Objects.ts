/**
 * The Kubernetes object shapes session-routing reads and writes, as plain JSON.
 * Only the fields we use or validate are named; everything else passes through
 * untouched, because the API server (and the local cluster) keep it.
 */

/** The managedFields entry server-side apply records per field manager. */
export interface ManagedFieldsEntry {
  readonly manager: string
  readonly operation: "Apply" | "Update"
  readonly apiVersion: string
  readonly time?: string
  readonly fieldsType: "FieldsV1"
  readonly fieldsV1: Record<string, unknown>
  readonly subresource?: string
}

export interface OwnerReference {
  readonly apiVersion: string
  readonly kind: string
  readonly name: string
  readonly uid: string
  readonly controller?: boolean
  readonly blockOwnerDeletion?: boolean
}

export interface ObjectMeta {
  readonly name?: string
  readonly generateName?: string
  readonly namespace?: string
  readonly uid?: string
  readonly resourceVersion?: string
  readonly generation?: number
  readonly creationTimestamp?: string
  readonly deletionTimestamp?: string
  readonly labels?: Readonly<Record<string, string>>
  readonly annotations?: Readonly<Record<string, string>>
  readonly ownerReferences?: ReadonlyArray<OwnerReference>
  readonly finalizers?: ReadonlyArray<string>
  readonly managedFields?: ReadonlyArray<ManagedFieldsEntry>
}

export interface KubeObject {
  readonly apiVersion?: string
  readonly kind?: string
  readonly metadata?: ObjectMeta
}

export interface ServicePort {
  readonly name?: string
  readonly port: number
  readonly targetPort?: number | string
  readonly protocol?: "TCP" | "UDP" | "SCTP"
}

export interface Service extends KubeObject {
  readonly spec?: {
    readonly type?: "ClusterIP" | "NodePort" | "LoadBalancer" | "ExternalName"
    readonly selector?: Readonly<Record<string, string>>
    readonly ports?: ReadonlyArray<ServicePort>
    readonly clusterIP?: string
  }
  readonly status?: Record<string, unknown>
}

export interface IngressServiceBackend {
  readonly name: string
  readonly port?: { readonly number?: number; readonly name?: string }
}

export interface IngressBackend {
  readonly service?: IngressServiceBackend
  readonly resource?: { readonly apiGroup?: string; readonly kind: string; readonly name: string }
}

export interface HttpIngressPath {
  readonly path?: string
  readonly pathType?: "Exact" | "Prefix" | "ImplementationSpecific"
  readonly backend: IngressBackend
}

export interface IngressRule {
  readonly host?: string
  readonly http?: { readonly paths: ReadonlyArray<HttpIngressPath> }
}

export interface IngressTls {
  readonly hosts?: ReadonlyArray<string>
  readonly secretName?: string
}

export interface LoadBalancerIngress {
  readonly ip?: string
  readonly hostname?: string
  readonly ports?: ReadonlyArray<{ readonly port: number; readonly protocol: string; readonly error?: string }>
}

export interface Ingress extends KubeObject {
  readonly spec?: {
    readonly ingressClassName?: string
    readonly defaultBackend?: IngressBackend
    readonly rules?: ReadonlyArray<IngressRule>
    readonly tls?: ReadonlyArray<IngressTls>
  }
  readonly status?: {
    readonly loadBalancer?: { readonly ingress?: ReadonlyArray<LoadBalancerIngress> }
  }
}

export interface IngressClass extends KubeObject {
  readonly spec?: { readonly controller?: string }
}

export interface Namespace extends KubeObject {
  readonly spec?: Record<string, unknown>
  readonly status?: { readonly phase?: string }
}

/** A `metav1.Condition`, as Gateway API status uses it. */
export interface Condition {
  readonly type: string
  readonly status: "True" | "False" | "Unknown"
  readonly reason: string
  readonly message: string
  readonly observedGeneration?: number
  readonly lastTransitionTime: string
}

export interface ParentReference {
  readonly group?: string
  readonly kind?: string
  readonly namespace?: string
  readonly name: string
  readonly sectionName?: string
  readonly port?: number
}

export interface HttpRouteMatch {
  readonly path?: { readonly type?: "Exact" | "PathPrefix" | "RegularExpression"; readonly value?: string }
}

export interface HttpBackendRef {
  readonly group?: string
  readonly kind?: string
  readonly namespace?: string
  readonly name: string
  readonly port?: number
  readonly weight?: number
}

export interface HttpRouteRule {
  readonly matches?: ReadonlyArray<HttpRouteMatch>
  readonly backendRefs?: ReadonlyArray<HttpBackendRef>
}

export interface RouteParentStatus {
  readonly parentRef: ParentReference
  readonly controllerName: string
  readonly conditions?: ReadonlyArray<Condition>
}

export interface HttpRoute extends KubeObject {
  readonly spec?: {
    readonly parentRefs?: ReadonlyArray<ParentReference>
    readonly hostnames?: ReadonlyArray<string>
    readonly rules?: ReadonlyArray<HttpRouteRule>
  }
  readonly status?: { readonly parents?: ReadonlyArray<RouteParentStatus> }
}

export interface GatewayListener {
  readonly name: string
  readonly hostname?: string
  readonly port: number
  readonly protocol: string
  readonly allowedRoutes?: {
    readonly namespaces?: {
      readonly from?: "Same" | "All" | "Selector"
      readonly selector?: {
        readonly matchLabels?: Readonly<Record<string, string>>
        readonly matchExpressions?: ReadonlyArray<{
          readonly key: string
          readonly operator: "In" | "NotIn" | "Exists" | "DoesNotExist"
          readonly values?: ReadonlyArray<string>
        }>
      }
    }
    /** The route kinds the listener takes; unset or empty: those of its protocol. */
    readonly kinds?: ReadonlyArray<{ readonly group?: string; readonly kind: string }>
  }
}

export interface ListenerStatus {
  readonly name: string
  readonly attachedRoutes: number
  readonly supportedKinds: ReadonlyArray<{ readonly group?: string; readonly kind: string }>
  readonly conditions: ReadonlyArray<Condition>
}

export interface Gateway extends KubeObject {
  readonly spec?: {
    readonly gatewayClassName: string
    readonly listeners: ReadonlyArray<GatewayListener>
  }
  readonly status?: {
    readonly addresses?: ReadonlyArray<{ readonly type?: string; readonly value: string }>
    readonly conditions?: ReadonlyArray<Condition>
    readonly listeners?: ReadonlyArray<ListenerStatus>
  }
}

export interface GatewayClass extends KubeObject {
  readonly spec?: { readonly controllerName: string; readonly description?: string }
  readonly status?: { readonly conditions?: ReadonlyArray<Condition> }
}

/** A container port, as a Service's named targetPort resolves against it. */
export interface ContainerPort {
  readonly name?: string
  readonly containerPort: number
  readonly protocol?: "TCP" | "UDP" | "SCTP"
}

/** A `core/v1` PodCondition (`Ready`, `PodScheduled`, ...). */
export interface PodCondition {
  readonly type: string
  readonly status: "True" | "False" | "Unknown"
  readonly reason?: string
  readonly message?: string
  readonly lastTransitionTime?: string
  readonly lastProbeTime?: string | null
}

export interface Pod extends KubeObject {
  readonly spec?: {
    readonly containers: ReadonlyArray<{
      readonly name: string
      readonly image?: string
      readonly ports?: ReadonlyArray<ContainerPort>
    }>
    readonly nodeName?: string
    readonly restartPolicy?: "Always" | "OnFailure" | "Never"
    /** Conditions besides its containers' readiness that the Pod's Ready waits for. */
    readonly readinessGates?: ReadonlyArray<{ readonly conditionType: string }>
  }
  readonly status?: {
    readonly phase?: "Pending" | "Running" | "Succeeded" | "Failed" | "Unknown"
    readonly conditions?: ReadonlyArray<PodCondition>
    readonly podIP?: string
    readonly podIPs?: ReadonlyArray<{ readonly ip: string }>
  }
}

/**
 * A `coordination.k8s.io/v1` Lease: who holds a lock, since when, for how long. Leader
 * election writes it; times are MicroTime (`2006-01-02T15:04:05.000000Z`).
 */
export interface Lease extends KubeObject {
  readonly spec?: {
    readonly holderIdentity?: string
    readonly leaseDurationSeconds?: number
    readonly acquireTime?: string
    readonly renewTime?: string
    readonly leaseTransitions?: number
  }
}

/** What an Event is about: `involvedObject` (core/v1) or `regarding` (events.k8s.io/v1). */
export interface ObjectReference {
  readonly kind?: string
  readonly namespace?: string
  readonly name?: string
  readonly uid?: string
  readonly apiVersion?: string
  readonly resourceVersion?: string
  readonly fieldPath?: string
}

/** A `core/v1` Event: the shape the server stores, and `kubectl events` and `describe` read. */
export interface CoreEvent extends KubeObject {
  readonly involvedObject: ObjectReference
  readonly reason?: string
  readonly message?: string
  readonly source?: { readonly component?: string; readonly host?: string }
  readonly firstTimestamp?: string | null
  readonly lastTimestamp?: string | null
  readonly count?: number
  readonly type?: "Normal" | "Warning"
  readonly eventTime?: string | null
  readonly series?: { readonly count?: number; readonly lastObservedTime?: string }
  readonly action?: string
  readonly related?: ObjectReference
  readonly reportingComponent?: string
  readonly reportingInstance?: string
}

/** An `events.k8s.io/v1` Event: the same object as a `CoreEvent`, with the newer field names. */
export interface EventV1 extends KubeObject {
  readonly eventTime: string | null
  readonly series?: { readonly count: number; readonly lastObservedTime: string }
  readonly reportingController?: string
  readonly reportingInstance?: string
  readonly action?: string
  readonly reason?: string
  readonly regarding?: ObjectReference
  readonly related?: ObjectReference
  readonly note?: string
  readonly type?: "Normal" | "Warning"
  readonly deprecatedSource?: { readonly component?: string; readonly host?: string }
  readonly deprecatedFirstTimestamp?: string | null
  readonly deprecatedLastTimestamp?: string | null
  readonly deprecatedCount?: number
}

/** One endpoint of an EndpointSlice: a Pod's addresses and whether it may take traffic. */
export interface Endpoint {
  readonly addresses: ReadonlyArray<string>
  readonly conditions?: { readonly ready?: boolean; readonly serving?: boolean; readonly terminating?: boolean }
  readonly targetRef?: ObjectReference
  readonly nodeName?: string
}

export interface EndpointPort {
  readonly name?: string
  readonly port?: number
  readonly protocol?: "TCP" | "UDP" | "SCTP"
  readonly appProtocol?: string
}

/** A `discovery.k8s.io/v1` EndpointSlice, as the EndpointSlice controller keeps one per selecting Service. */
export interface EndpointSlice extends KubeObject {
  readonly addressType: "IPv4" | "IPv6" | "FQDN"
  readonly endpoints: ReadonlyArray<Endpoint>
  readonly ports?: ReadonlyArray<EndpointPort>
}

/** A core/v1 ServiceAccount: the identity a runner in the cluster authenticates as. */
export interface ServiceAccount extends KubeObject {
  readonly automountServiceAccountToken?: boolean
}

/** One RBAC rule: verbs on resources (`ingresses`, `ingresses/status`) of API groups, or on non-resource paths. */
export interface PolicyRule {
  readonly verbs: ReadonlyArray<string>
  readonly apiGroups?: ReadonlyArray<string>
  readonly resources?: ReadonlyArray<string>
  readonly resourceNames?: ReadonlyArray<string>
  readonly nonResourceURLs?: ReadonlyArray<string>
}

/** An `rbac.authorization.k8s.io/v1` Role (namespaced) or ClusterRole. */
export interface Role extends KubeObject {
  readonly rules?: ReadonlyArray<PolicyRule>
}

/** Who a binding grants to: a `User`, a `Group`, or a `ServiceAccount` (with its namespace). */
export interface Subject {
  readonly kind: "User" | "Group" | "ServiceAccount"
  readonly name: string
  readonly namespace?: string
  readonly apiGroup?: string
}

/** An `rbac.authorization.k8s.io/v1` RoleBinding or ClusterRoleBinding. */
export interface RoleBinding extends KubeObject {
  readonly subjects?: ReadonlyArray<Subject>
  readonly roleRef: { readonly apiGroup: string; readonly kind: "Role" | "ClusterRole"; readonly name: string }
}

/** One field error in an `Invalid` Status, shaped as the API server reports it. */
/**
 * One cause of a failure (a field invalid, a field another manager owns). Its kind is
 * `reason` on the wire: Go's `StatusCause.Type` is serialized under that key.
 */
export interface StatusCause {
  readonly reason?: string
  readonly message?: string
  readonly field?: string
}

/** `metav1.Status`: the body of every API error (and of some successful deletes). */
export interface Status {
  readonly kind: "Status"
  readonly apiVersion: "v1"
  readonly metadata: Record<string, unknown>
  readonly status: "Success" | "Failure"
  readonly message?: string
  readonly reason?: string
  readonly details?: {
    readonly name?: string
    readonly group?: string
    readonly kind?: string
    readonly uid?: string
    readonly causes?: ReadonlyArray<StatusCause>
    readonly retryAfterSeconds?: number
  }
  readonly code: number
}

export interface ObjectList<A> {
  readonly apiVersion?: string
  readonly kind?: string
  readonly metadata: { readonly resourceVersion?: string; readonly continue?: string }
  readonly items: ReadonlyArray<A>
}
