/**
 * Exec credentials kept for as long as they are valid. client-node caches a plugin's
 * credential only until its `expirationTimestamp`, and one without that field counts
 * as already expired: the plugin then runs once per request (a `check` spawned it 20
 * times). kubectl keeps such a credential for the life of the process; so does this,
 * and concurrent requests share one run of the plugin instead of starting one each.
 */
import type * as k8s from "@kubernetes/client-node"

/** The part of client-node's exec authenticator this relies on (pinned at 1.4.0). */
interface ExecAuthenticator {
  readonly tokenCache: Record<string, unknown>
  getCredential: (user: k8s.User) => Promise<ExecCredential | null>
}

interface ExecCredential {
  readonly status?: { readonly expirationTimestamp?: string }
}

const isExecAuthenticator = (value: unknown): value is ExecAuthenticator =>
  typeof value === "object" && value !== null && "tokenCache" in value &&
  typeof (value as { getCredential?: unknown }).getCredential === "function"

const cached = new WeakSet<object>()

/**
 * Makes `kc`'s exec authenticator keep a credential with no expiry for the process,
 * and run the plugin once for concurrent requests. A credential with an expiry is
 * left to client-node's own refresh. Idempotent.
 */
export const cacheExecCredentials = (kc: k8s.KubeConfig): void => {
  const authenticators = (kc as unknown as { authenticators?: ReadonlyArray<unknown> }).authenticators ?? []
  for (const authenticator of authenticators) {
    if (!isExecAuthenticator(authenticator) || cached.has(authenticator)) continue
    cached.add(authenticator)
    const own = authenticator.getCredential.bind(authenticator)
    const kept = new Map<string, Promise<ExecCredential | null>>()
    authenticator.getCredential = (user) => {
      const held = kept.get(user.name)
      if (held !== undefined) return held
      const running = own(user).then(
        (credential) => {
          // With an expiry, client-node's cache decides when to run the plugin again.
          if (credential?.status?.expirationTimestamp !== undefined) kept.delete(user.name)
          return credential
        },
        (error: unknown) => {
          // A failed run is not kept: the next request tries again.
          kept.delete(user.name)
          throw error
        }
      )
      kept.set(user.name, running)
      return running
    }
  }
}
