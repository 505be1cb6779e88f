/**
 * How the bench's bare node:http clients reach a cluster: `http` for LocalCluster, `https`
 * with the kubeconfig's CA and client certificate for the real control plane. A module of
 * its own so that a runner process can use it without loading the rest of the bench.
 */
import type * as k8s from "@kubernetes/client-node"
import * as fs from "node:fs"
import * as http from "node:http"
import * as https from "node:https"

/** The client certificate and the CA a kubeconfig names, PEM. */
export interface Tls {
  readonly ca?: string | undefined
  readonly cert?: string | undefined
  readonly key?: string | undefined
}

/** Where the bench's own requests go, and as whom. */
export interface Endpoint {
  readonly server: string
  readonly token: string | undefined
  readonly tls: Tls | undefined
}

/** `http` or `https`, as `server` says, with the kubeconfig's certificates on every connection. */
export const transport = (server: string, tls: Tls | undefined) => {
  const secure = server.startsWith("https:")
  return {
    agent: (options: http.AgentOptions): http.Agent =>
      secure ? new https.Agent({ ...options, ...tls }) : new http.Agent(options),
    request: secure ? https.request : http.request
  }
}

const pem = (data: string | undefined, file: string | undefined) =>
  data !== undefined
    ? Buffer.from(data, "base64").toString("utf8")
    : file !== undefined
    ? fs.readFileSync(file, "utf8")
    : undefined

/** The current context's server, bearer token and certificates. */
export const endpointOf = (kc: k8s.KubeConfig): Endpoint => {
  const cluster = kc.getCurrentCluster()!
  const user = kc.getCurrentUser()
  const tls = {
    ca: pem(cluster.caData, cluster.caFile),
    cert: pem(user?.certData, user?.certFile),
    key: pem(user?.keyData, user?.keyFile)
  }
  return { server: cluster.server, token: user?.token, tls }
}

export const authorization = (endpoint: Endpoint): http.OutgoingHttpHeaders =>
  endpoint.token === undefined ? {} : { authorization: `Bearer ${endpoint.token}` }

/** One request with a JSON body; answers the status code and the parsed answer (or its text). */
export const call = (
  endpoint: Endpoint,
  agent: http.Agent,
  method: string,
  path: string,
  body?: unknown
): Promise<{ readonly code: number; readonly body: any }> =>
  new Promise((resolve) => {
    const text = body === undefined ? undefined : JSON.stringify(body)
    const request = transport(endpoint.server, endpoint.tls).request(`${endpoint.server}${path}`, {
      method,
      agent,
      headers: {
        accept: "application/json",
        ...authorization(endpoint),
        ...(text !== undefined ? { "content-type": "application/json" } : {})
      }
    }, (response) => {
      const chunks: Array<Buffer> = []
      response.on("data", (chunk: Buffer) => chunks.push(chunk))
      response.on("end", () => {
        const raw = Buffer.concat(chunks).toString("utf8")
        let parsed: unknown = raw
        try {
          parsed = JSON.parse(raw)
        } catch {
          // Not JSON (a /metrics page): the text.
        }
        resolve({ code: response.statusCode ?? 0, body: parsed })
      })
      response.on("error", (error) => resolve({ code: 0, body: error.message }))
    })
    request.on("error", (error) => resolve({ code: 0, body: error.message }))
    request.end(text)
  })
