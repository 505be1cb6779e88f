/**
 * One probe request over node:http or node:https: `GET /` to an address with the
 * host's Host header and, for https, its SNI. The certificate is checked here rather
 * than by the TLS layer, so a failure can name what the certificate does cover.
 */
import { Duration, Effect } from "effect"
import * as http from "node:http"
import * as https from "node:https"
import * as tls from "node:tls"
import { certificateNames, type ProbeAnswer, type ProbeTarget } from "../../domain/RouteProbe.js"

/** One request: what it got, never a failure. */
export type ProbeRequest = (target: ProbeTarget, timeout: Duration.Duration) => Effect.Effect<ProbeAnswer>

const namesOf = (socket: tls.TLSSocket): ReadonlyArray<string> => {
  const certificate = socket.getPeerCertificate()
  return certificate === undefined || Object.keys(certificate).length === 0
    ? []
    : certificateNames(certificate.subjectaltname, certificate.subject?.CN as string | undefined)
}

const TLS_CODES = /^(ERR_TLS_|ERR_SSL_|EPROTO|CERT_|DEPTH_ZERO|SELF_SIGNED|UNABLE_TO_)/

const send = (target: ProbeTarget, signal: AbortSignal): Promise<ProbeAnswer> =>
  new Promise<ProbeAnswer>((resolve) => {
    const options: https.RequestOptions = {
      host: target.address,
      port: target.port,
      path: "/",
      method: "GET",
      headers: { Host: target.host, "User-Agent": "session-routing-probe" },
      // One connection per probe: a pooled one could carry another host's SNI.
      agent: false,
      signal
    }
    const onResponse = (response: http.IncomingMessage) => {
      if (target.scheme === "https") {
        const socket = response.socket as tls.TLSSocket
        // A callback that threw would be an uncaught exception, not a probe result.
        let problems: ReadonlyArray<string>
        let names: ReadonlyArray<string> = []
        try {
          names = namesOf(socket)
          const identity = tls.checkServerIdentity(target.host, socket.getPeerCertificate())
          problems = [
            ...(socket.authorized ? [] : [String(socket.authorizationError)]),
            ...(identity !== undefined ? [identity.message] : [])
          ]
        } catch (error) {
          problems = [String(error)]
        }
        if (problems.length > 0) {
          response.destroy()
          return resolve({ _tag: "Tls", message: problems.join("; "), certificateNames: names })
        }
      }
      // Only the status matters; the body is dropped.
      response.resume()
      resolve({ _tag: "Answered", status: response.statusCode ?? 0 })
    }
    const request = target.scheme === "https"
      ? https.request({ ...options, servername: target.host, rejectUnauthorized: false }, onResponse)
      : http.request(options, onResponse)
    request.on("error", (error: NodeJS.ErrnoException) => {
      const code = error.code ?? ""
      if (code === "ECONNREFUSED") return resolve({ _tag: "Refused" })
      if (TLS_CODES.test(code)) return resolve({ _tag: "Tls", message: error.message, certificateNames: [] })
      resolve({ _tag: "Failed", message: error.message })
    })
    request.end()
  })

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
