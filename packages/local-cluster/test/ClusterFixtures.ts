/**
 * Objects the LocalCluster tests create: valid as a real server sees them, with the
 * fields each test varies as parameters.
 */
import type { CoreEvent, Gateway, HttpRoute, Ingress, Pod, Service } from "session-routing/kubernetes"

export const NS = "demo"

export const ingress = (
  name: string,
  options: { readonly labels?: Record<string, string>; readonly host?: string; readonly className?: string } = {}
): Ingress => ({
  apiVersion: "networking.k8s.io/v1",
  kind: "Ingress",
  metadata: { name, ...(options.labels !== undefined ? { labels: options.labels } : {}) },
  spec: {
    ...(options.className !== undefined ? { ingressClassName: options.className } : {}),
    rules: [{
      host: options.host ?? `${name}.example.test`,
      http: { paths: [{ path: "/", pathType: "Prefix", backend: { service: { name: "web", port: { number: 80 } } } }] }
    }]
  }
})

export const service = (name: string, port = 80, labels?: Record<string, string>): Service => ({
  apiVersion: "v1",
  kind: "Service",
  metadata: { name, ...(labels !== undefined ? { labels } : {}) },
  spec: { selector: { app: name }, ports: [{ name: "http", port }] }
})

export const httpRoute = (
  name: string,
  options: { readonly hostnames?: ReadonlyArray<string>; readonly labels?: Record<string, string> } = {}
): HttpRoute => ({
  apiVersion: "gateway.networking.k8s.io/v1",
  kind: "HTTPRoute",
  metadata: { name, ...(options.labels !== undefined ? { labels: options.labels } : {}) },
  spec: {
    parentRefs: [{ name: "gw" }],
    hostnames: options.hostnames ?? [`${name}.example.test`],
    rules: [{ backendRefs: [{ name: "web", port: 80 }] }]
  }
})

export const gateway = (name: string): Gateway => ({
  apiVersion: "gateway.networking.k8s.io/v1",
  kind: "Gateway",
  metadata: { name },
  spec: { gatewayClassName: "local", listeners: [{ name: "http", port: 80, protocol: "HTTP" }] }
})

/** A Pod with one container; `ports` are its named container ports. */
export const pod = (
  name: string,
  options: {
    readonly labels?: Record<string, string>
    readonly ports?: ReadonlyArray<{ readonly name: string; readonly containerPort: number }>
  } = {}
): Pod => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name, ...(options.labels !== undefined ? { labels: options.labels } : {}) },
  spec: {
    containers: [{
      name: "main",
      image: "registry.example/app:1.0",
      ...(options.ports !== undefined ? { ports: options.ports } : {})
    }]
  }
})

/** A legacy core/v1 Event about `involved`, as client-go's old recorder writes one. */
export const coreEvent = (
  name: string,
  involved: { readonly kind: string; readonly name: string; readonly uid?: string; readonly apiVersion?: string },
  options: {
    readonly reason?: string
    readonly message?: string
    readonly type?: "Normal" | "Warning"
    readonly at?: string
  } = {}
): CoreEvent => ({
  apiVersion: "v1",
  kind: "Event",
  metadata: { name, namespace: NS },
  involvedObject: { ...involved, namespace: NS },
  reason: options.reason ?? "Sync",
  message: options.message ?? "Scheduled for sync",
  type: options.type ?? "Normal",
  source: { component: "test-controller" },
  count: 1,
  firstTimestamp: options.at ?? "2024-01-01T00:00:00Z",
  lastTimestamp: options.at ?? "2024-01-01T00:00:00Z"
})
