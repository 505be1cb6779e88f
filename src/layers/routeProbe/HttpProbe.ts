/**
 * One probe request over a socket of its own: `GET /` to an address with the host's
 * Host header and, for https, its SNI. The certificate is checked here rather than by
 * the TLS layer, so a failure can name what the certificate does cover, and before
 * the request is sent.
 */
import { Duration, Effect } from "effect"
import * as net from "node:net"
import * as tls from "node:tls"
import { certificateNames, type ProbeAnswer, type ProbeTarget } from "../../domain/RouteProbe.js"
import { resolveForProbe } from "./ProbeAddress.js"

/** One request: what it got, never a failure. */
export type ProbeRequest = (target: ProbeTarget, timeout: Duration.Duration) => Effect.Effect<ProbeAnswer>

const namesOf = (socket: tls.TLSSocket): ReadonlyArray<string> => {
  const certificate = socket.getPeerCertificate()
  return certificate === undefined || Object.keys(certificate).length === 0
    ? []
    : certificateNames(certificate.subjectaltname, certificate.subject?.CN as string | undefined)
}

const TLS_CODES = /^(ERR_TLS_|ERR_SSL_|EPROTO|CERT_|DEPTH_ZERO|SELF_SIGNED|UNABLE_TO_)/

/** The most of an answer read: its status line is all a probe needs. */
export const MAX_PROBE_READ_BYTES = 4 * 1024

const STATUS_LINE = /^HTTP\/\d(?:\.\d)? (\d{3})/

/** What every HTTP/1 answer begins with. */
const HTTP_START = "HTTP/"

/**
 * Why bytes that cannot begin an HTTP answer are not one: a TLS record (a content
 * type of 20 to 23, then version 3.x) is an https port answering a plain request.
 */
const notHttp = (head: string): string =>
  head.charCodeAt(0) >= 0x14 && head.charCodeAt(0) <= 0x17 && head.charCodeAt(1) === 0x03
    ? "the answer is TLS, not HTTP: the port serves https (set SESSION_ROUTE_PROBE=https)"
    : `the answer is not HTTP: it does not begin with "${HTTP_START}" (does the port serve something else?)`

/** Why a certificate does not do for `host`, or undefined when it does. */
const certificateProblems = (socket: tls.TLSSocket, host: string): ReadonlyArray<string> => {
  // A check that threw would be an uncaught exception, not a probe result.
  try {
    const identity = tls.checkServerIdentity(host, socket.getPeerCertificate())
    return [
      ...(socket.authorized ? [] : [String(socket.authorizationError)]),
      ...(identity !== undefined ? [identity.message] : [])
    ]
  } catch (error) {
    return [String(error)]
  }
}

/** A connection of its own to `ip`, on https with the host's name for SNI. */
const connectTo = (target: ProbeTarget, ip: string): net.Socket =>
  target.scheme === "https"
    ? tls.connect({
      host: ip,
      port: target.port,
      ...(net.isIP(target.host) === 0 ? { servername: target.host } : {}),
      // Checked once connected (`certificateProblems`), where the failure can name what the certificate covers.
      rejectUnauthorized: false
    })
    : net.connect({ host: ip, port: target.port })

/** What the first bytes of an answer say, or undefined while they say nothing yet. */
const headAnswer = (head: string): ProbeAnswer | undefined => {
  const status = STATUS_LINE.exec(head)
  if (status !== null) return { _tag: "Answered", status: Number(status[1]) }
  // Decided on the first bytes: a peer that sends something else and holds the
  // connection open would otherwise read as a timeout, as if nothing had answered.
  if (!(head.length >= HTTP_START.length ? head.startsWith(HTTP_START) : HTTP_START.startsWith(head))) {
    return { _tag: "Failed", message: notHttp(head) }
  }
  if (head.includes("\r\n")) {
    return { _tag: "Failed", message: "the answer's status line has no status code" }
  }
  if (head.length >= MAX_PROBE_READ_BYTES) {
    return {
      _tag: "Failed",
      message: `the answer has no status line within its first ${MAX_PROBE_READ_BYTES / 1024} KiB`
    }
  }
  return undefined
}

/** What a socket's error means, `head` being what of the answer had come. */
const socketFailure = (error: NodeJS.ErrnoException, head: string): ProbeAnswer => {
  const code = error.code ?? ""
  if (code === "ECONNREFUSED") return { _tag: "Refused" }
  if (TLS_CODES.test(code)) return { _tag: "Tls", message: error.message, certificateNames: [] }
  // Node's own words ("read ECONNRESET") name the syscall, not what happened.
  if (code === "ECONNRESET") {
    return {
      _tag: "Failed",
      message: head === ""
        ? "the connection was reset before an answer (ECONNRESET)"
        : "the connection was reset before the status line was complete (ECONNRESET)"
    }
  }
  return { _tag: "Failed", message: error.message }
}

/**
 * One `GET /` on a connection of its own to `ip`: on https the certificate is checked
 * once the handshake is done and before a byte of the request is sent; the answer is
 * read up to its status line (at most `MAX_PROBE_READ_BYTES`) and the connection then
 * closed, so a workload that streams forever costs nothing.
 */
const exchange = (target: ProbeTarget, ip: string, signal: AbortSignal): Promise<ProbeAnswer> =>
  new Promise<ProbeAnswer>((resolve) => {
    let settled = false
    const socket = connectTo(target, ip)
    const finish = (answer: ProbeAnswer) => {
      if (settled) return
      settled = true
      socket.destroy()
      signal.removeEventListener("abort", abort)
      resolve(answer)
    }
    const abort = () => finish({ _tag: "Failed", message: "the probe was cancelled" })
    signal.addEventListener("abort", abort)
    const request = () =>
      socket.write(
        `GET / HTTP/1.1\r\nHost: ${target.host}\r\nUser-Agent: session-routing-probe\r\nConnection: close\r\n\r\n`
      )
    if (target.scheme === "https") {
      socket.once("secureConnect", () => {
        const tlsSocket = socket as tls.TLSSocket
        const problems = certificateProblems(tlsSocket, target.host)
        if (problems.length > 0) {
          return finish({ _tag: "Tls", message: problems.join("; "), certificateNames: namesOf(tlsSocket) })
        }
        request()
      })
    } else {
      socket.once("connect", request)
    }
    let head = ""
    socket.setEncoding("latin1")
    socket.on("data", (text: string) => {
      head += text
      const answer = headAnswer(head)
      if (answer !== undefined) finish(answer)
    })
    socket.on("end", () =>
      finish({
        _tag: "Failed",
        message: head === ""
          ? "the connection closed before an answer"
          : "the connection closed before the status line was complete"
      }))
    socket.on("error", (error: NodeJS.ErrnoException) => finish(socketFailure(error, head)))
  })

/** Checks an address taken from a status before anything connects to it. */
const send = async (target: ProbeTarget, signal: AbortSignal): Promise<ProbeAnswer> => {
  if (target.addressFrom !== "status") return exchange(target, target.address, signal)
  const resolved = await resolveForProbe(target.address)
  return resolved.ok
    ? exchange(target, resolved.ip, signal)
    : { _tag: "Disallowed", address: resolved.address, why: resolved.why }
}

/** The live request: aborted, and reported as a timeout, when `timeout` passes on the Clock. */
export const httpProbe: ProbeRequest = (target, timeout) =>
  Effect.tryPromise({
    try: (signal) => send(target, signal),
    catch: (error): ProbeAnswer => ({ _tag: "Failed", message: String(error) })
  }).pipe(
    Effect.merge,
    Effect.timeoutTo({
      duration: timeout,
      onSuccess: (answer): ProbeAnswer => answer,
      onTimeout: (): ProbeAnswer => ({ _tag: "TimedOut", afterMs: Duration.toMillis(timeout) })
    })
  )
