/**
 * Failures with no HTTP answer, as `KubeError`s: which socket or TLS error it was
 * decides the words and whether waiting can heal it. Neither the client's own message
 * nor the error itself is kept: a credential plugin's failure carries its stderr
 * (tokens, refresh secrets) and a socket error the URL, and a cause reaches traces as
 * `exception.stacktrace`. The cause is only the error's name and code.
 */
import { type KubeError, Transport, Unexpected } from "../../services/KubeError.js"
import { describeRequest, type RequestContext } from "./KubeErrorParsing.js"

const SYSTEM_ERRORS: Record<string, string> = {
  ECONNREFUSED: "the connection was refused (is the API server running, and is the kubeconfig's server address right?)",
  ECONNRESET: "the connection was reset before the answer was complete",
  EPIPE: "the connection was closed while the request was being sent",
  ERR_STREAM_PREMATURE_CLOSE: "the connection closed before the answer was complete",
  ETIMEDOUT: "the connection timed out",
  ENOTFOUND: "the host name does not resolve",
  EAI_AGAIN: "the host name could not be resolved just now",
  EHOSTUNREACH: "the host is unreachable",
  ENETUNREACH: "the network is unreachable",
  ECONNABORTED: "the connection was aborted"
}

const TLS_CODE = /CERT|TLS|SSL|EPROTO|SELF_SIGNED|UNABLE_TO_VERIFY|UNABLE_TO_GET_ISSUER/

const errorCode = (error: unknown): string | undefined => {
  if (typeof error !== "object" || error === null) return undefined
  const code = (error as { code?: unknown }).code
  if (typeof code === "string") return code
  const cause = (error as { cause?: unknown }).cause
  return cause !== undefined && cause !== error ? errorCode(cause) : undefined
}

const errorName = (error: unknown): string | undefined =>
  typeof error === "object" && error !== null && typeof (error as { name?: unknown }).name === "string"
    ? (error as { name: string }).name
    : undefined

/** What is kept of a failure: its name and code, nothing it said. */
const shownCause = (name: string | undefined, code: string | undefined): Error => {
  const shown = new Error(code === undefined ? name ?? "unknown error" : `${name ?? "Error"} (${code})`)
  shown.name = name ?? "Error"
  // Our own frames only: where the failure was turned into a KubeError.
  return Object.assign(shown, code === undefined ? {} : { code })
}

/**
 * A failure with no HTTP answer. Network failures become `Transport` (transient);
 * anything else failed inside the client before a request went out (a credential
 * plugin, a missing parameter) and retrying will not help: `Unexpected`. The
 * client's own message is never used: it can carry the URL with its query and more.
 */
export const fromTransportError = (ctx: RequestContext, server: string, failure: unknown): KubeError => {
  const what = describeRequest(ctx)
  const code = errorCode(failure)
  const name = errorName(failure)
  const error = shownCause(name, code)
  if (code !== undefined && Object.hasOwn(SYSTEM_ERRORS, code)) {
    return new Transport({
      cause: error,
      reason: `could not ${what} at ${server}: ${SYSTEM_ERRORS[code]} (${code})`,
      kind: code === "ECONNREFUSED"
        ? "refused"
        : code === "ENOTFOUND"
        ? "dns"
        : code === "ETIMEDOUT"
        ? "no-answer"
        : "other"
    })
  }
  if (code !== undefined && TLS_CODE.test(code)) {
    return new Transport({
      cause: error,
      reason:
        `could not ${what} at ${server}: the TLS handshake failed (${code}); check the kubeconfig's certificate-authority and server name`,
      kind: "tls"
    })
  }
  if (name === "AbortError") {
    // Our own interruption never gets here (the fiber is gone); this is an abort from below.
    return new Transport({
      cause: error,
      reason: `could not ${what} at ${server}: the request was aborted`,
      kind: "other"
    })
  }
  if (code !== undefined) {
    return new Transport({
      cause: error,
      reason: `could not ${what} at ${server}: the request failed (${code})`,
      kind: "other"
    })
  }
  return new Unexpected({
    cause: error,
    reason: `could not ${what} at ${server}: the client failed before sending the request (${
      name ?? "unknown error"
    }); check the kubeconfig user's credentials`
  })
}
