/**
 * Who sent a request, as kube-apiserver's authenticators decide it: a client
 * certificate the cluster CA signed (CN the user, each O a group), else a bearer token
 * the server knows (one it issued, or a ServiceAccount token from the TokenRequest API
 * while it is unexpired and still bound), else anonymous. Credentials presented and not
 * recognised are a 401.
 */
import { Clock, Effect } from "effect"
import { createHash, randomBytes } from "node:crypto"
import type { IncomingMessage } from "node:http"
import type { TLSSocket } from "node:tls"
import type { Status } from "session-routing/kubernetes"
import { TOKEN_ISSUER, type TokenClaims } from "./internal/serviceAccountJwt.js"

/** An authenticated identity: the user name and its groups, as authorizers see them. */
export interface UserInfo {
  readonly name: string
  readonly groups: ReadonlyArray<string>
  /** Its uid, when the authenticator knows one: a ServiceAccount token's is the ServiceAccount's. */
  readonly uid?: string
  /** What else the authenticator says of it (`user.Info`'s extra): the credential's id, a token's Pod. */
  readonly extra?: Readonly<Record<string, ReadonlyArray<string>>>
}

/**
 * The extra key naming the credential a request came with (`X509SHA256=<hex>` for a client
 * certificate, `JTI=<jti>` for a ServiceAccount token), which audit logs and whoami show.
 */
export const CREDENTIAL_ID_KEY = "authentication.kubernetes.io/credential-id"

/** A request with no credentials, when anonymous requests are allowed (the server's default). */
export const anonymousUser: UserInfo = { name: "system:anonymous", groups: ["system:unauthenticated"] }

/** The group that may do anything, whatever RBAC holds. */
export const MASTERS_GROUP = "system:masters"

/** The user name of a ServiceAccount, and the groups its tokens carry. */
export const serviceAccountUser = (namespace: string, name: string): UserInfo => ({
  name: `system:serviceaccount:${namespace}:${name}`,
  groups: ["system:serviceaccounts", `system:serviceaccounts:${namespace}`]
})

/**
 * The user a ServiceAccount token is, as the service account authenticator reads it from
 * the claims: the ServiceAccount with its uid, and as extra the token's id and, for a token
 * bound to a Pod, the Pod and its node (the node's uid only when a Node object had one).
 */
export const serviceAccountTokenUser = (claims: TokenClaims): UserInfo => {
  const extra: Record<string, ReadonlyArray<string>> = {}
  const { node, pod } = claims
  if (pod !== undefined && pod.name !== "" && (pod.uid ?? "") !== "") {
    extra["authentication.kubernetes.io/pod-name"] = [pod.name]
    extra["authentication.kubernetes.io/pod-uid"] = [pod.uid!]
  }
  if (claims.id !== "") extra[CREDENTIAL_ID_KEY] = [`JTI=${claims.id}`]
  if (node !== undefined && node.name !== "") {
    extra["authentication.kubernetes.io/node-name"] = [node.name]
    if ((node.uid ?? "") !== "") extra["authentication.kubernetes.io/node-uid"] = [node.uid!]
  }
  const uid = claims.serviceAccount.uid ?? ""
  return {
    ...serviceAccountUser(claims.namespace, claims.serviceAccount.name),
    ...(uid !== "" ? { uid } : {}),
    ...(Object.keys(extra).length > 0 ? { extra } : {})
  }
}

/** The 401 every authenticator failure answers, with no hint of why. */
export const unauthorizedStatus: Status = {
  kind: "Status",
  apiVersion: "v1",
  metadata: {},
  status: "Failure",
  message: "Unauthorized",
  reason: "Unauthorized",
  code: 401
}

/**
 * The audiences the API server accepts tokens for: `--api-audiences`, which defaults to
 * the issuer, `https://kubernetes.default.svc.cluster.local` as kubeadm and kind set it.
 */
export const API_AUDIENCES: ReadonlyArray<string> = [TOKEN_ISSUER]

/**
 * How long past its `exp` a ServiceAccount token is still accepted: the JWT library's
 * default leeway, which the service account authenticator validates with.
 */
export const EXPIRY_LEEWAY_MILLIS = 60_000

/** A ServiceAccount token the TokenRequest API issued, and what must hold for it to be accepted. */
export interface BoundToken {
  readonly user: UserInfo
  readonly audiences: ReadonlyArray<string>
  /** Its `exp`, in epoch milliseconds as Effect's Clock reads them. */
  readonly expiresAt: number
  /** Whether its ServiceAccount (and the Pod it is bound to, if any) still exist with the uids it was issued for. */
  readonly bound: Effect.Effect<boolean>
}

/** The identities a server recognises: tokens it issued, and certificates its CA signed. */
export interface Authenticator {
  /** The user a request comes from; undefined: credentials presented and not recognised (401). */
  readonly authenticate: (req: IncomingMessage) => Effect.Effect<UserInfo | undefined>
  /** A new bearer token for `user`, recognised from now on. */
  readonly issueToken: (user: UserInfo) => string
  /** Recognises `token`, which the TokenRequest API issued, for as long as `bound` says. */
  readonly recordBoundToken: (token: string, bound: BoundToken) => void
}

const AUTHENTICATED = "system:authenticated"

/** Every authenticated user is also in `system:authenticated`, last, as the server appends it. */
const authenticated = (user: UserInfo): UserInfo => ({
  ...user,
  groups: user.groups.includes(AUTHENTICATED) ? user.groups : [...user.groups, AUTHENTICATED]
})

const asList = (value: string | ReadonlyArray<string> | undefined): ReadonlyArray<string> =>
  value === undefined ? [] : typeof value === "string" ? [value] : value

/** The user a verified client certificate names; undefined when none was presented. */
const fromCertificate = (req: IncomingMessage): UserInfo | "invalid" | undefined => {
  const socket = req.socket as Partial<TLSSocket>
  if (typeof socket.getPeerCertificate !== "function") return undefined
  const peer = socket.getPeerCertificate()
  if (peer === null || peer === undefined || Object.keys(peer).length === 0) return undefined
  // The TLS layer asked for a certificate but accepts any: the CA check happens here, as
  // the x509 authenticator does it, so an unknown certificate is a 401 rather than a handshake error.
  if (socket.authorized !== true) return "invalid"
  const name = asList(peer.subject?.CN)[0]
  if (name === undefined || name === "") return "invalid"
  // The x509 authenticator names the credential by the SHA-256 of the certificate's DER.
  const id = `X509SHA256=${createHash("sha256").update(peer.raw).digest("hex")}`
  return authenticated({ name, groups: asList(peer.subject?.O), extra: { [CREDENTIAL_ID_KEY]: [id] } })
}

/** An authenticator that knows the tokens it issued; certificates are checked against the server's CA by TLS. */
/**
 * The token of an `Authorization` header as kube-apiserver's bearer-token authenticator
 * reads it: `Bearer <token>` (any case), split on single spaces. Any other header, or a
 * bearer with no token, is no credential at all: the request goes on as anonymous
 * rather than being refused, and only a token nobody issued is a 401.
 */
export const bearerToken = (header: string | undefined): string | undefined => {
  const auth = (header ?? "").trim()
  if (auth === "") return undefined
  const [scheme, token] = auth.split(" ", 2)
  if (scheme!.toLowerCase() !== "bearer" || token === undefined || token === "") return undefined
  return token
}

export const makeAuthenticator = (): Authenticator => {
  const tokens = new Map<string, UserInfo>()
  const boundTokens = new Map<string, BoundToken>()

  /** A ServiceAccount token's user, as the service account authenticator checks it. */
  const fromBoundToken = (token: string): Effect.Effect<UserInfo | undefined> =>
    Effect.gen(function*() {
      const bound = boundTokens.get(token)
      if (bound === undefined) return undefined
      if ((yield* Clock.currentTimeMillis) - EXPIRY_LEEWAY_MILLIS > bound.expiresAt) {
        // Expired for good: nothing will accept it again.
        boundTokens.delete(token)
        return undefined
      }
      // A token for other audiences is meant for someone else, not for this server.
      if (!bound.audiences.some((audience) => API_AUDIENCES.includes(audience))) return undefined
      return (yield* bound.bound) ? authenticated(bound.user) : undefined
    })

  return {
    authenticate: (req) => {
      const certificate = fromCertificate(req)
      if (certificate === "invalid") return Effect.succeed(undefined)
      if (certificate !== undefined) return Effect.succeed(certificate)
      const token = bearerToken(req.headers.authorization)
      if (token === undefined) return Effect.succeed(anonymousUser)
      const user = tokens.get(token)
      return user !== undefined ? Effect.succeed(authenticated(user)) : fromBoundToken(token)
    },
    issueToken: (user) => {
      const token = randomBytes(24).toString("base64url")
      tokens.set(token, user)
      return token
    },
    recordBoundToken: (token, bound) => {
      boundTokens.set(token, bound)
    }
  }
}
