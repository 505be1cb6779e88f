/**
 * The demo's session Pod: the Pod object behind the session Service, a loopback
 * stand-in for its containers that makes it Ready, and the Events recorded on it.
 */
import type { DataPlane, SessionCluster, SessionPod } from "@session-routing/local-cluster"
import { Clock, Effect, type Scope } from "effect"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import { EventResource } from "../../domain/Resources.js"
import type { PortMapping } from "../../domain/Session.js"
import { cliError } from "../CliError.js"
import { eventsTable } from "../present/EventsTable.js"
import { loadLocalCluster } from "./LocalClusterPackage.js"

/** What the workload answers; the test and the demo's own check expect exactly this. */
export const workloadAnswer = (sessionId: string, port: number): string =>
  `hello from session ${sessionId} port ${port}`

/** The port a request was for, from its host (`<port>-<session>.<domain>`), as the proxy passed it on. */
const portOfRequest = (req: Http.IncomingMessage): string => {
  const forwarded = req.headers["x-forwarded-host"]
  const host = (Array.isArray(forwarded) ? forwarded[0] : forwarded) ?? req.headers.host ?? ""
  return /^(\d+)-/.exec(host)?.[1] ?? "?"
}

/** The session Pod's loopback listener: answers every request with `workloadAnswer` for the port asked for. */
export const listen = (sessionId: string): Effect.Effect<number, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.async<Http.Server>((resume) => {
      const server = Http.createServer((req, res) => {
        const body = `${workloadAnswer(sessionId, Number(portOfRequest(req)))}\n`
        res.writeHead(200, { "content-type": "text/plain; charset=utf-8", "content-length": Buffer.byteLength(body) })
        res.end(body)
      })
      server.listen(0, "127.0.0.1", () => resume(Effect.succeed(server)))
    }),
    (server) =>
      Effect.async<void>((resume) => {
        server.close(() => resume(Effect.void))
        server.closeAllConnections()
      })
  ).pipe(Effect.map((server) => (server.address() as AddressInfo).port))

/**
 * Starts the session Pod for `command` (`demo`, `cluster`): the Pod object (its labels
 * put it behind the session Service) and a stand-in for its containers on 127.0.0.1.
 * Once that listens, the Pod turns Ready, the EndpointSlice controller lists it, and
 * the data plane sends the session's traffic to it, as a real cluster would. Both go
 * with the scope.
 */
export const startSessionPod = (
  sc: SessionCluster.SessionCluster & { readonly dataPlane: DataPlane },
  sessionId: string,
  ports: ReadonlyArray<PortMapping>,
  command = "demo"
) =>
  Effect.gen(function*() {
    const { createSessionPod } = yield* loadLocalCluster(command)
    const pod = yield* createSessionPod(sc.cluster.store, {
      namespace: sc.namespace,
      sessionId,
      ports: ports.map((p) => p.port)
    }).pipe(
      Effect.mapError((status) =>
        cliError(`${command}: cannot start the session Pod: ${status.message ?? status.code}`)
      )
    )
    const local = yield* listen(sessionId)
    yield* Effect.acquireRelease(
      sc.dataPlane.registerPod(pod, { host: "127.0.0.1", port: local }),
      () => Effect.ignore(sc.dataPlane.unregisterPod(pod))
    )
    return { pod, local }
  })

/** The Events on the session Pod, as `kubectl events --for pod/<name>` would list them. */
export const podEvents = (sc: SessionCluster.SessionCluster, pod: SessionPod) =>
  Effect.gen(function*() {
    const list = yield* Effect.orElseSucceed(sc.cluster.store.list(EventResource, sc.namespace), () => ({ items: [] }))
    const events = list.items.filter((e) => e.involvedObject.name === pod.name && e.involvedObject.uid === pod.uid)
    return { events, lines: eventsTable(events, yield* Clock.currentTimeMillis) }
  })
