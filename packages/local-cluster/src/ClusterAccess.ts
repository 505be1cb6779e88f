/**
 * A secured LocalCluster's keys: the CA made at start, the API server's serving
 * certificate, the authenticator and authorizer it runs with, and kubeconfigs for any
 * identity by any of the three ways a client proves one: a client certificate, a bearer
 * token, or an exec credential plugin that prints an ExecCredential.
 */
import { Effect } from "effect"
import { stringify } from "yaml"
import type { ApiSecurity } from "./ApiSecurity.js"
import { makeAuthenticator, MASTERS_GROUP, serviceAccountUser, type UserInfo } from "./Authentication.js"
import { bootstrapBindings, bootstrapRoles } from "./internal/rbacBootstrap.js"
import { makeCertificateAuthority } from "./Pki.js"
import { alwaysAllow, makeRbacAuthorizer } from "./Rbac.js"
import { ClusterRoleBindingResource, ClusterRoleResource } from "./ServedResources.js"
import type { ClusterStore } from "./Store.js"

/** How a kubeconfig's user proves who it is. */
export type Credential =
  | { readonly _tag: "ClientCertificate"; readonly user: UserInfo }
  | { readonly _tag: "Token"; readonly user: UserInfo }
  | { readonly _tag: "ExecPlugin"; readonly user: UserInfo }

/** Builders for each way of authenticating. */
export const Credential = {
  /** A client certificate the cluster CA signs: CN the user, O each group. */
  clientCertificate: (name: string, groups: ReadonlyArray<string> = []): Credential => ({
    _tag: "ClientCertificate",
    user: { name, groups }
  }),
  /** A bearer token the server issues for the user. */
  token: (name: string, groups: ReadonlyArray<string> = []): Credential => ({ _tag: "Token", user: { name, groups } }),
  /** An exec plugin the client runs for a token: `node -e` printing an ExecCredential. */
  execPlugin: (name: string, groups: ReadonlyArray<string> = []): Credential => ({
    _tag: "ExecPlugin",
    user: { name, groups }
  }),
  /** A ServiceAccount's token, as a Pod running as it would present. */
  serviceAccount: (namespace: string, name: string): Credential => ({
    _tag: "Token",
    user: serviceAccountUser(namespace, name)
  })
} as const

/** The admin the default kubeconfig authenticates as, as kubeadm's admin.conf does. */
export const ADMIN = Credential.clientCertificate("kubernetes-admin", [MASTERS_GROUP])

/** What the exec plugin runs: it prints the token its environment hands it, valid for an hour. */
const EXEC_SCRIPT = [
  "const token = process.env.LOCAL_CLUSTER_TOKEN;",
  "if (!token) { console.error('LOCAL_CLUSTER_TOKEN is not set'); process.exit(1) }",
  "process.stdout.write(JSON.stringify({ apiVersion: 'client.authentication.k8s.io/v1', kind: 'ExecCredential',",
  "status: { token, expirationTimestamp: new Date(Date.now() + 3600e3).toISOString() } }))"
].join(" ")

/** A secured cluster's access: what the server needs, and kubeconfigs for its clients. */
export interface ClusterAccess {
  /** The CA certificate, PEM. */
  readonly ca: string
  readonly tls: { readonly cert: string; readonly key: string; readonly ca: string }
  readonly security: ApiSecurity
  /** A kubeconfig that reaches `url` as the credential's user. */
  readonly kubeconfigFor: (url: string, credential: Credential, names?: KubeconfigNames) => Effect.Effect<string>
}

/** The names a kubeconfig uses, and the namespace its context selects. */
export interface KubeconfigNames {
  readonly name?: string
  readonly namespace?: string
}

const base64 = (pem: string): string => Buffer.from(pem, "utf8").toString("base64")

/**
 * Makes the CA and the serving certificate, and the authenticator; with `rbac`, the
 * RBAC authorizer over `store`, whose bootstrap roles and bindings it writes first.
 */
export const makeClusterAccess = (
  store: ClusterStore,
  options: { readonly rbac?: boolean } = {}
): Effect.Effect<ClusterAccess> =>
  Effect.gen(function*() {
    const authority = yield* makeCertificateAuthority()
    const serving = yield* authority.serving
    const authenticator = makeAuthenticator()
    if (options.rbac === true) {
      for (const role of bootstrapRoles) yield* Effect.orDie(store.create(ClusterRoleResource, undefined, role))
      for (const binding of bootstrapBindings) {
        yield* Effect.orDie(store.create(ClusterRoleBindingResource, undefined, binding))
      }
    }
    const userEntry = (credential: Credential): Effect.Effect<Record<string, unknown>> => {
      switch (credential._tag) {
        case "ClientCertificate":
          return Effect.map(authority.client(credential.user.name, credential.user.groups), (pair) => ({
            "client-certificate-data": base64(pair.cert),
            "client-key-data": base64(pair.key)
          }))
        case "Token":
          return Effect.succeed({ token: authenticator.issueToken(credential.user) })
        case "ExecPlugin":
          return Effect.succeed({
            exec: {
              apiVersion: "client.authentication.k8s.io/v1",
              command: process.execPath,
              args: ["-e", EXEC_SCRIPT],
              env: [{ name: "LOCAL_CLUSTER_TOKEN", value: authenticator.issueToken(credential.user) }],
              interactiveMode: "Never"
            }
          })
      }
    }
    return {
      ca: authority.cert,
      tls: { ...serving, ca: authority.cert },
      security: {
        authenticator,
        authorizer: options.rbac === true ? makeRbacAuthorizer(store) : alwaysAllow,
        exists: (target) =>
          Effect.map(Effect.either(store.get(target.resource, target.namespace, target.name ?? "")), (got) =>
            got._tag === "Right")
      },
      kubeconfigFor: (url, credential, names = {}) =>
        Effect.map(userEntry(credential), (user) => {
          const name = names.name ?? "local-cluster"
          return stringify({
            apiVersion: "v1",
            kind: "Config",
            clusters: [{ name, cluster: { server: url, "certificate-authority-data": base64(authority.cert) } }],
            users: [{ name: `${name}-${credential.user.name.replaceAll(":", "-")}`, user }],
            contexts: [{
              name,
              context: {
                cluster: name,
                user: `${name}-${credential.user.name.replaceAll(":", "-")}`,
                namespace: names.namespace ?? "default"
              }
            }],
            "current-context": name,
            preferences: {}
          })
        })
    }
  })
