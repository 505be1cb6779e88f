/**
 * The floor under any publish on this runtime: the requests one publish makes (the list
 * of another mode's objects, shared by the publishes under way as the library shares it,
 * then a server-side-apply dry run and an apply of the Service and the Ingress), sent
 * over `node:http` with keep-alive and 32 connections, each body `JSON.stringify`d and
 * each answer `JSON.parse`d; no Effect, no time limits, no telemetry, no health. The
 * scale bench runs it beside the runner, at the same size.
 */
// The library's own manifest builders (not part of its public surface), bundled into the
// runner, so that the floor sends the very objects a publish sends.
import {
  buildSessionIngress,
  buildSessionService,
  LABEL_SESSION_ID,
  type ManifestSettings
} from "../src/domain/Manifests.js"
import { countGcPauses, type GcPauses } from "./processStats.js"
import { type Tls, transport } from "./transport.js"

export interface BarePublishTarget {
  readonly server: string
  /** The kubeconfig user's bearer token, if it has one. */
  readonly token: string | undefined
  /** The kubeconfig's CA and client certificate, for an https server. */
  readonly tls?: Tls | undefined
  readonly settings: ManifestSettings
}

/** What the floor cost: the process's CPU and the wall time for every session, from the first request to the last answer. */
export interface BarePublished {
  readonly cpuMs: number
  readonly wallMs: number
  /** Garbage collection's pauses of the main thread meanwhile. */
  readonly gc: GcPauses
}

const CONNECTIONS = 32
/** Sessions one shared list asks for, as the library's `MAX_SESSIONS_PER_LIST`. */
const SESSIONS_PER_LIST = 32

/** Publishes `specs` all at once, as the scale runner does; rejects on the first request the server refuses. */
export const barePublish = async (
  target: BarePublishTarget,
  specs: ReadonlyArray<Parameters<typeof buildSessionService>[1]>,
  /** Told of each session whose objects are all applied, as it is. */
  onPublished?: (spec: Parameters<typeof buildSessionService>[1]) => void
): Promise<BarePublished> => {
  const { agent: agentOf, request: httpRequest } = transport(target.server, target.tls)
  const agent = agentOf({ keepAlive: true, maxSockets: CONNECTIONS })
  const auth = target.token !== undefined ? { Authorization: `Bearer ${target.token}` } : {}
  const send = (method: string, path: string, body?: string) =>
    new Promise<unknown>((resolve, reject) => {
      const request = httpRequest(`${target.server}${path}`, {
        method,
        agent,
        headers: {
          Accept: "application/json",
          ...auth,
          ...(body !== undefined ? { "Content-Type": "application/apply-patch+yaml" } : {})
        }
      }, (response) => {
        const chunks: Array<Buffer> = []
        response.on("data", (chunk: Buffer) => chunks.push(chunk))
        response.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8")
          if ((response.statusCode ?? 500) >= 300) {
            return reject(new Error(`${method} ${path}: ${response.statusCode} ${text}`))
          }
          resolve(JSON.parse(text))
        })
        response.on("error", reject)
      })
      request.on("error", reject)
      request.end(body)
    })
  const ns = encodeURIComponent(target.settings.sessionNamespace)
  const apply = (collection: string, name: string, object: unknown, dryRun: boolean) =>
    send(
      "PATCH",
      `${collection}/${name}?fieldManager=session-routing&force=true${dryRun ? "&dryRun=All" : ""}`,
      JSON.stringify(object)
    )
  const services = `/api/v1/namespaces/${ns}/services`
  const ingresses = `/apis/networking.k8s.io/v1/namespaces/${ns}/ingresses`
  const routes = `/apis/gateway.networking.k8s.io/v1/namespaces/${ns}/httproutes`
  // One list out at a time; the sessions that ask meanwhile gather for the next one.
  let gathering: { readonly ids: Array<string>; listed: Promise<unknown> } | undefined
  let last: Promise<unknown> = Promise.resolve()
  const lookUp = (sessionId: string): Promise<unknown> => {
    if (gathering !== undefined && gathering.ids.length < SESSIONS_PER_LIST) {
      gathering.ids.push(sessionId)
      return gathering.listed
    }
    const batch: { readonly ids: Array<string>; listed: Promise<unknown> } = { ids: [sessionId], listed: last }
    batch.listed = last.then(() => {
      if (gathering === batch) gathering = undefined
      const selector = `${LABEL_SESSION_ID} in (${batch.ids.join(",")})`
      return send("GET", `${routes}?limit=500&labelSelector=${encodeURIComponent(selector)}`)
    })
    gathering = batch
    last = batch.listed.catch(() => undefined)
    return batch.listed
  }
  const publish = async (spec: Parameters<typeof buildSessionService>[1]) => {
    const service = buildSessionService(target.settings, spec)
    const { ingress } = buildSessionIngress(target.settings, spec)
    const name = service.metadata!.name!
    await lookUp(spec.sessionId)
    await apply(services, name, service, true)
    await apply(ingresses, name, ingress, true)
    await apply(services, name, service, false)
    await apply(ingresses, name, ingress, false)
    onPublished?.(spec)
  }
  const gcPauses = countGcPauses()
  const cpuStart = process.cpuUsage()
  const start = performance.now()
  try {
    await Promise.all(specs.map(publish))
  } finally {
    agent.destroy()
  }
  const cpu = process.cpuUsage(cpuStart)
  return { cpuMs: (cpu.user + cpu.system) / 1000, wallMs: performance.now() - start, gc: gcPauses() }
}
