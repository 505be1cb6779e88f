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
      readonly selector?: { readonly matchLabels?: Readonly<Record<string, string>> }
    }
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

/** One field error in an `Invalid` Status, shaped as the API server reports it. */
export interface StatusCause {
  readonly reason?: string
  readonly message?: string
  readonly field?: string
  readonly type?: string
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
