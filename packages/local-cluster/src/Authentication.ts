/**
 * Who sent a request, as kube-apiserver's authenticators decide it: a client
 * certificate the cluster CA signed (CN the user, each O a group), else a bearer token
 * the server knows, else anonymous. Credentials presented and not recognised are a 401.
 */
import { randomBytes } from "node:crypto"
import type { IncomingMessage } from "node:http"
import type { TLSSocket } from "node:tls"
import type { Status } from "session-routing/kubernetes"

/** An authenticated identity: the user name and its groups, as authorizers see them. */
export interface UserInfo {
  readonly name: string
  readonly groups: ReadonlyArray<string>
}

/** A request with no credentials, when anonymous requests are allowed (the server's default). */
export const anonymousUser: UserInfo = { name: "system:anonymous", groups: ["system:unauthenticated"] }

/** The group that may do anything, whatever RBAC holds. */
export const MASTERS_GROUP = "system:masters"

/** The user name of a ServiceAccount, and the groups its tokens carry. */
export const serviceAccountUser = (namespace: string, name: string): UserInfo => ({
  name: `system:serviceaccount:${namespace}:${name}`,
  groups: ["system:serviceaccounts", `system:serviceaccounts:${namespace}`]
})

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

/** The identities a server recognises: tokens it issued, and certificates its CA signed. */
export interface Authenticator {
  /** The user a request comes from; undefined: credentials presented and not recognised (401). */
  readonly authenticate: (req: IncomingMessage) => UserInfo | undefined
  /** A new bearer token for `user`, recognised from now on. */
  readonly issueToken: (user: UserInfo) => string
}

const AUTHENTICATED = "system:authenticated"

/** Every authenticated user is also in `system:authenticated`. */
const authenticated = (user: UserInfo): UserInfo => ({
  name: user.name,
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
  return authenticated({ name, groups: asList(peer.subject?.O) })
}

/** An authenticator that knows the tokens it issued; certificates are checked against the server's CA by TLS. */
export const makeAuthenticator = (): Authenticator => {
  const tokens = new Map<string, UserInfo>()
  return {
    authenticate: (req) => {
      const certificate = fromCertificate(req)
      if (certificate === "invalid") return undefined
      if (certificate !== undefined) return certificate
      const header = req.headers.authorization
      if (header === undefined) return anonymousUser
      const match = /^Bearer\s+(\S+)\s*$/i.exec(header)
      const user = match === null ? undefined : tokens.get(match[1]!)
      return user === undefined ? undefined : authenticated(user)
    },
    issueToken: (user) => {
      const token = randomBytes(24).toString("base64url")
      tokens.set(token, user)
      return token
    }
  }
}
