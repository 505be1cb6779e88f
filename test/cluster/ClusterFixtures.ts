/**
 * Objects the LocalCluster tests create: valid as a real server sees them, with the
 * fields each test varies as parameters.
 */
import type { Gateway, HttpRoute, Ingress, Service } from "../../src/domain/Objects.js"

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

export const httpRoute = (name: string, options: { readonly hostnames?: ReadonlyArray<string>; readonly labels?: Record<string, string> } = {}): HttpRoute => ({
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
