/**
 * The floor under any watch transport on this runtime: the list and the watch the
 * shared watch makes, over `node:http` with keep-alive, each line parsed with
 * `JSON.parse` and its object kept, slim, in a Map; no Effect, no decoding, no
 * liveness and no route health. The route-health bench runs it against the same
 * cluster and status writes as the shared watch, so that its CPU per route shows what
 * a leaner transport could save at most.
 */
import { Effect } from "effect"
import type * as http from "node:http"
import { statusWritten } from "./statusWritten.js"
import { type Tls, transport } from "./transport.js"

export interface BareWatchTarget {
  readonly server: string
  /** The kubeconfig user's bearer token, if it has one. */
  readonly token: string | undefined
  /** The kubeconfig's CA and client certificate, for an https server. */
  readonly tls?: Tls | undefined
  readonly namespace: string
  readonly mode: "ingress" | "gateway"
  readonly labelSelector: string
  /** The routed objects whose status is awaited: the run ends when each has one. */
  readonly objects: number
  /** Told of each routed object's first status, as it arrives. */
  readonly onProgrammed?: (name: string) => void
}

interface Slim {
  readonly name: string
  readonly resourceVersion: string | undefined
  readonly status: unknown
}

/**
 * Lists, then watches from the list's resourceVersion, until every routed object has
 * a status. Interrupting it closes both connections; a failed request, a status code
 * other than 200, or a body that is not JSON ends it as a defect naming the request.
 */
export const bareWatch = (target: BareWatchTarget): Effect.Effect<void> =>
  Effect.async<void>((resume) => {
    const kind = target.mode === "ingress" ? "Ingress" : "HTTPRoute"
    const { agent: agentOf, request } = transport(target.server, target.tls)
    const agent = agentOf({ keepAlive: true })
    const headers = {
      Accept: "application/json",
      ...(target.token !== undefined ? { Authorization: `Bearer ${target.token}` } : {})
    }
    const collection = target.mode === "ingress"
      ? `/apis/networking.k8s.io/v1/namespaces/${target.namespace}/ingresses`
      : `/apis/gateway.networking.k8s.io/v1/namespaces/${target.namespace}/httproutes`
    const selector = `labelSelector=${encodeURIComponent(target.labelSelector)}`
    const cache = new Map<string, Slim>()
    const programmed = new Set<string>()
    let finished = false
    const finish = (outcome: Effect.Effect<void>) => {
      if (finished) return
      finished = true
      agent.destroy()
      resume(outcome)
    }
    const fail = (what: string, cause: unknown) =>
      finish(Effect.dieMessage(`bare watch: ${what}: ${cause instanceof Error ? cause.message : String(cause)}`))
    const keep = (object: any) => {
      const name = String(object?.metadata?.name)
      cache.set(name, { name, resourceVersion: object?.metadata?.resourceVersion, status: object?.status })
      if (!programmed.has(name) && statusWritten(kind, object)) {
        programmed.add(name)
        target.onProgrammed?.(name)
      }
      if (programmed.size >= target.objects) finish(Effect.void)
    }
    const get = (path: string, onResponse: (response: http.IncomingMessage) => void) =>
      request(`${target.server}${path}`, { agent, headers }, (response) => {
        if (response.statusCode !== 200) {
          response.resume()
          return fail(`GET ${path}`, `status ${response.statusCode}`)
        }
        response.setEncoding("utf8")
        onResponse(response)
      }).on("error", (error) => fail(`GET ${path}`, error)).end()

    get(`${collection}?${selector}`, (response) => {
      let body = ""
      response.on("data", (text: string) => (body += text))
      response.on("end", () => {
        let list: any
        try {
          list = JSON.parse(body)
        } catch (error) {
          return fail(`list ${collection}`, error)
        }
        for (const item of list.items ?? []) keep(item)
        const watch = `${collection}?${selector}&watch=1&allowWatchBookmarks=true&resourceVersion=${
          encodeURIComponent(String(list.metadata?.resourceVersion ?? ""))
        }`
        get(watch, (events) => {
          let rest = ""
          events.on("data", (text: string) => {
            rest += text
            for (let end = rest.indexOf("\n"); end >= 0; end = rest.indexOf("\n")) {
              const line = rest.slice(0, end)
              rest = rest.slice(end + 1)
              if (line === "") continue
              try {
                const event = JSON.parse(line)
                if (event.type === "ADDED" || event.type === "MODIFIED") keep(event.object)
                else if (event.type === "DELETED") cache.delete(String(event.object?.metadata?.name))
              } catch (error) {
                return fail(`watch ${collection}`, error)
              }
            }
          })
          events.on("end", () => fail(`watch ${collection}`, "the server ended the watch"))
        })
      })
    })
    return Effect.sync(() => {
      finished = true
      agent.destroy()
    })
  })
