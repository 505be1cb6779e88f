/**
 * Raw HTTP for the LocalCluster wire tests: fetch with the body parsed when it is
 * JSON, HTTPS trusting a secured cluster's CA, and a line reader for watch streams, so
 * a test sees exactly what the server sent.
 */
import { Effect } from "effect"
import { request } from "node:https"
import type { ServiceAccount } from "session-routing/kubernetes"
import type { Credential } from "../src/ClusterAccess.js"
import type { LocalCluster } from "../src/LocalCluster.js"
import { ServiceAccountResource } from "../src/ServedResources.js"
import { NS } from "./ClusterFixtures.js"

export interface Answer {
  readonly status: number
  readonly contentType: string | null
  readonly headers: Headers
  readonly text: string
  readonly body: any
}

export const call = (url: string, path: string, init: RequestInit = {}) =>
  Effect.promise(async (): Promise<Answer> => {
    const response = await fetch(`${url}${path}`, init)
    const text = await response.text()
    let body: unknown
    try {
      body = JSON.parse(text)
    } catch {
      body = undefined
    }
    return {
      status: response.status,
      contentType: response.headers.get("content-type"),
      headers: response.headers,
      text,
      body
    }
  })

export const send = (url: string, method: string, path: string, body: unknown, contentType = "application/json") =>
  call(url, path, {
    method,
    headers: { "content-type": contentType },
    body: typeof body === "string" ? body : JSON.stringify(body)
  })

/** What a secured cluster answered: the status code and the body, parsed. */
export interface Raw {
  readonly status: number
  readonly body: any
}

/**
 * One HTTPS request trusting the cluster CA, with optional headers, client certificate
 * and body: JSON, or bytes sent as they are (a protobuf body).
 */
export const secureCall = (
  cluster: LocalCluster.Service,
  method: string,
  path: string,
  options: {
    readonly headers?: Record<string, string>
    readonly cert?: string
    readonly key?: string
    readonly body?: unknown
  } = {}
) =>
  Effect.async<Raw>((resume) => {
    const req = request(`${cluster.url}${path}`, {
      method,
      ca: cluster.access!.ca,
      headers: { "content-type": "application/json", ...options.headers },
      ...(options.cert !== undefined ? { cert: options.cert, key: options.key } : {})
    }, (res) => {
      let text = ""
      res.on("data", (chunk) => (text += chunk))
      res.on("end", () =>
        resume(Effect.succeed({ status: res.statusCode ?? 0, body: text === "" ? undefined : JSON.parse(text) })))
    })
    req.on("error", (e) =>
      resume(Effect.die(e)))
    req.end(
      options.body === undefined
        ? undefined
        : options.body instanceof Uint8Array
        ? options.body
        : JSON.stringify(options.body)
    )
  })

/** Reads newline-delimited JSON from a streaming response, one line at a time. */
export const lineReader = (response: Response) => {
  const reader = response.body!.getReader()
  const decoder = new TextDecoder()
  let buffer = ""
  return async (): Promise<string | undefined> => {
    for (;;) {
      const newline = buffer.indexOf("\n")
      if (newline >= 0) {
        const line = buffer.slice(0, newline)
        buffer = buffer.slice(newline + 1)
        return line
      }
      const { done, value } = await reader.read()
      if (done) return buffer === "" ? undefined : buffer
      buffer += decoder.decode(value, { stream: true })
    }
  }
}

/** An `authorization` header presenting `token`. */
export const bearer = (token: string) => ({ authorization: `Bearer ${token}` })

/** An `authorization` header for `credential`'s user: the bearer token its kubeconfig holds. */
export const bearerFor = (cluster: LocalCluster.Service, credential: Credential) =>
  Effect.map(cluster.kubeconfigAs(credential), (text) => bearer(/token: (\S+)/.exec(text)![1]!))

/** Creates ServiceAccount `name` in the test namespace, straight in the store. */
export const createServiceAccount = (cluster: LocalCluster.Service, name: string) =>
  Effect.orDie(
    cluster.store.create<ServiceAccount>(ServiceAccountResource, NS, {
      apiVersion: "v1",
      kind: "ServiceAccount",
      metadata: { name }
    })
  )
