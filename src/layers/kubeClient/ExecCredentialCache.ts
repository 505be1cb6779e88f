/**
 * Exec credentials kept for as long as the server takes them. client-node caches a
 * plugin's credential only until its `expirationTimestamp`, and one without that field
 * counts as already expired: the plugin then runs once per request (a `check` spawned
 * it 20 times). kubectl keeps such a credential for the life of the process; so does
 * this, concurrent requests sharing one run of the plugin, until the server refuses it
 * with a 401: then it is dropped and the next request runs the plugin again, as
 * client-go refreshes an exec credential on a 401 (a rotated token otherwise failed
 * every call for the rest of the process).
 */
import type * as k8s from "@kubernetes/client-node"

/** The part of client-node's exec authenticator this relies on (pinned at 1.4.0). */
interface ExecAuthenticator {
  readonly tokenCache: Record<string, ExecCredential | null | undefined>
  getCredential: (user: k8s.User) => Promise<ExecCredential | null>
  isAuthProvider: (user: k8s.User) => boolean
}

interface ExecCredential {
  readonly status?: {
    readonly expirationTimestamp?: string
    readonly token?: string
    readonly clientCertificateData?: string
  }
}

/** A run of the plugin for one user, and its credential once it has one. */
interface Kept {
  readonly running: Promise<ExecCredential | null>
  credential?: ExecCredential | null
}

const isExecAuthenticator = (value: unknown): value is ExecAuthenticator =>
  typeof value === "object" && value !== null && "tokenCache" in value &&
  typeof (value as { getCredential?: unknown }).getCredential === "function" &&
  typeof (value as { isAuthProvider?: unknown }).isAuthProvider === "function"

/** What each wrapped authenticator keeps, by user name. */
const keptBy = new WeakMap<object, Map<string, Kept>>()

const execAuthenticators = (kc: k8s.KubeConfig): ReadonlyArray<ExecAuthenticator> =>
  ((kc as unknown as { authenticators?: ReadonlyArray<unknown> }).authenticators ?? []).filter(isExecAuthenticator)

/**
 * Makes `kc`'s exec authenticator keep a credential with no expiry until a 401 drops it
 * (`dropExecCredential`), and run the plugin once for concurrent requests. A credential
 * with an expiry is left to client-node's own refresh. Idempotent.
 */
export const cacheExecCredentials = (kc: k8s.KubeConfig): void => {
  for (const authenticator of execAuthenticators(kc)) {
    if (keptBy.has(authenticator)) continue
    const kept = new Map<string, Kept>()
    keptBy.set(authenticator, kept)
    const own = authenticator.getCredential.bind(authenticator)
    authenticator.getCredential = (user) => {
      const held = kept.get(user.name)
      if (held !== undefined) return held.running
      const entry: Kept = {
        running: own(user).then(
          (credential) => {
            entry.credential = credential
            // With an expiry, client-node's cache decides when to run the plugin again.
            if (credential?.status?.expirationTimestamp !== undefined && kept.get(user.name) === entry) {
              kept.delete(user.name)
            }
            return credential
          },
          (error: unknown) => {
            // A failed run is not kept: the next request tries again.
            if (kept.get(user.name) === entry) kept.delete(user.name)
            throw error
          }
        )
      }
      kept.set(user.name, entry)
      return entry.running
    }
  }
}

/** Whether `credential` is what a request sent with `authorization` carried. */
const sentWith = (credential: ExecCredential | null | undefined, authorization: string | undefined): boolean => {
  const token = credential?.status?.token
  // A credential of a client certificate alone puts no header on the request.
  return token === undefined || token === "" ? authorization === undefined : authorization === `Bearer ${token}`
}

/**
 * After a 401 to a request sent with `authorization`: forgets the exec credential that
 * request carried (the one kept here, and client-node's cached one with an expiry), so
 * the next request runs the plugin again. A credential that is not the one the request
 * carried stays: when many requests are refused at once, the first drops the stale
 * credential and the rest share the one run that replaces it. Returns whether the
 * kubeconfig's user gets its credentials from an exec plugin, i.e. whether the call is
 * worth sending again.
 */
export const dropExecCredential = (kc: k8s.KubeConfig, authorization: string | undefined): boolean => {
  const user = kc.getCurrentUser()
  if (user === null) return false
  let fromPlugin = false
  for (const authenticator of execAuthenticators(kc)) {
    if (!authenticator.isAuthProvider(user)) continue
    fromPlugin = true
    const kept = keptBy.get(authenticator)
    const held = kept?.get(user.name)
    // Still running: a run started after the request was sent, already a fresh one.
    if (held !== undefined && "credential" in held && sentWith(held.credential, authorization)) kept!.delete(user.name)
    if (sentWith(authenticator.tokenCache[user.name], authorization)) authenticator.tokenCache[user.name] = null
  }
  return fromPlugin
}
