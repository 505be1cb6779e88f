/**
 * The floor under writing a session's Event: the request the recorder makes for a
 * session whose hosts all settled (one events.k8s.io/v1 Event on its Pod, the three
 * verdicts counted in its series), sent over `node:http` with keep-alive, four at a
 * time from a queue of at most 1,000 as the recorder does, each body `JSON.stringify`d
 * and each answer `JSON.parse`d; no Effect, no correlator, no time limits. The scale
 * bench runs it beside a runner with Events off: what any Event costs the verdicts
 * here, the runner's own recorder left out.
 */
import { type Tls, transport } from "./transport.js"

/** What is written where: the server, its bearer token, and the sessions' namespace. */
export interface BareEventsTarget {
  readonly server: string
  readonly token: string | undefined
  /** The kubeconfig's CA and client certificate, for an https server. */
  readonly tls?: Tls | undefined
  readonly namespace: string
}

/** The session an Event regards. */
export interface BareEventSession {
  readonly sessionId: string
  readonly podName: string
  readonly podUid: string
}

export interface BareEvents {
  /** Queues the Event of `session`, whose `hosts` all settled; drops it when 1,000 wait already. */
  readonly settled: (session: BareEventSession, hosts: number) => void
  /** Resolves once nothing is queued or in flight. */
  readonly idle: () => Promise<void>
  /** Events written, dropped for a full queue, and refused or failed. */
  readonly counts: () => { readonly written: number; readonly dropped: number; readonly failed: number }
  readonly close: () => void
}

const WRITERS = 4
const MAX_QUEUED = 1000

/** RFC 3339 with six fractional digits, as `MicroTime` is parsed. */
const microTime = (epochMs: number) => new Date(epochMs).toISOString().replace(/\.(\d{3})Z$/, ".$1000Z")

export const bareEvents = (target: BareEventsTarget): BareEvents => {
  const { agent: agentOf, request: httpRequest } = transport(target.server, target.tls)
  const agent = agentOf({ keepAlive: true, maxSockets: WRITERS })
  const path = `/apis/events.k8s.io/v1/namespaces/${encodeURIComponent(target.namespace)}/events`
  const headers = {
    Accept: "application/json",
    "Content-Type": "application/json",
    ...(target.token !== undefined ? { Authorization: `Bearer ${target.token}` } : {})
  }
  const queue: Array<string> = []
  let inFlight = 0
  let written = 0
  let dropped = 0
  let failed = 0
  let sequence = 0
  let waiting: Array<() => void> = []

  const settle = () => {
    inFlight -= 1
    next()
    if (inFlight === 0 && queue.length === 0) {
      for (const resolve of waiting) resolve()
      waiting = []
    }
  }
  const next = () => {
    const body = queue.shift()
    if (body === undefined) return
    inFlight += 1
    const request = httpRequest(`${target.server}${path}`, { method: "POST", agent, headers }, (response) => {
      const chunks: Array<Buffer> = []
      response.on("data", (chunk: Buffer) => chunks.push(chunk))
      response.on("end", () => {
        // The answer is read as the library reads one: parsed when the write succeeded.
        if ((response.statusCode ?? 500) < 300) {
          JSON.parse(Buffer.concat(chunks).toString("utf8"))
          written += 1
        } else failed += 1
        settle()
      })
    })
    request.on("error", () => {
      failed += 1
      settle()
    })
    request.end(body)
  }

  const settled = (session: BareEventSession, hosts: number) => {
    if (queue.length >= MAX_QUEUED) {
      dropped += 1
      return
    }
    const now = Date.now()
    const time = microTime(now)
    queue.push(JSON.stringify({
      apiVersion: "events.k8s.io/v1",
      kind: "Event",
      metadata: {
        name: `${session.podName}.${(now * 1000 + (sequence++ % 1000)).toString(16)}`,
        namespace: target.namespace
      },
      eventTime: time,
      reportingController: "session-routing",
      reportingInstance: "session-routing-bench",
      action: "WatchRoute",
      reason: "RouteProgrammed",
      regarding: {
        apiVersion: "v1",
        kind: "Pod",
        namespace: target.namespace,
        name: session.podName,
        uid: session.podUid
      },
      note: `${hosts} hosts of session ${session.sessionId} are programmed`,
      type: "Normal",
      ...(hosts > 1 ? { series: { count: hosts, lastObservedTime: time } } : {})
    }))
    if (inFlight < WRITERS) next()
  }

  return {
    settled,
    idle: () =>
      inFlight === 0 && queue.length === 0 ? Promise.resolve() : new Promise((resolve) => waiting.push(resolve)),
    counts: () => ({ written, dropped, failed }),
    close: () => agent.destroy()
  }
}
