/**
 * The cluster a contract test runs against: in `npm test`, LocalCluster (HTTPS,
 * authentication and RBAC on, its controller manager running); in `npm run
 * test:cluster`, the real control plane the run started (test/control-plane), or the
 * cluster `SESSION_ROUTING_E2E_KUBECONFIG` names. Each test is written once and asserts
 * the same on both: where LocalCluster answers otherwise, LocalCluster is wrong.
 */
import { LocalCluster } from "@session-routing/local-cluster"
import { Context, Effect, Layer, type Scope } from "effect"
import { randomBytes } from "node:crypto"
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { inject } from "vitest"
import { type RawApi, rawApi } from "./RawApi.js"

export interface ContractCluster {
  /** For messages: `LocalCluster`, or the real server and its version. */
  readonly name: string
  /** Whether it is a real kube-apiserver. */
  readonly real: boolean
  /** An admin kubeconfig. */
  readonly kubeconfig: string
  /** Requests as the admin (system:masters). */
  readonly admin: RawApi
  /** A fresh namespace for the scope, labelled for the run, deleted when the scope closes. */
  readonly namespace: Effect.Effect<string, never, Scope.Scope>
  /** Requests as a new ServiceAccount of `namespace` that nothing grants anything to. */
  readonly serviceAccount: (namespace: string, name: string) => Effect.Effect<RawApi>
}

export class Contract extends Context.Tag("test/contract/Contract")<Contract, ContractCluster>() {}

/** The label on every namespace a contract run makes, valued with the run's id. */
export const CONTRACT_LABEL = "session-routing.dev/contract"

const tempKubeconfig = Effect.acquireRelease(
  Effect.promise(() => mkdtemp(join(tmpdir(), "session-routing-contract-"))),
  (dir) => Effect.promise(() => rm(dir, { recursive: true, force: true }))
).pipe(Effect.map((dir) => join(dir, "kubeconfig")))

/** The real cluster of this run, if `npm run test:cluster` started or names one. */
const realKubeconfig = (): string | undefined => {
  const controlPlane = inject("controlPlane" as never) as { readonly kubeconfig: string } | null | undefined
  if (controlPlane !== undefined && controlPlane !== null) return controlPlane.kubeconfig
  const named = process.env.SESSION_ROUTING_E2E_KUBECONFIG?.trim()
  return controlPlane === null && named !== undefined && named !== "" ? named : undefined
}

/** Whether the contract runs against a real API server in this run. */
export const onRealServer = (): boolean => realKubeconfig() !== undefined

const make = (kubeconfig: string, real: boolean): Effect.Effect<ContractCluster> =>
  Effect.gen(function*() {
    const admin = yield* rawApi(kubeconfig)
    const version = yield* admin.call("GET", "/version")
    const runId = randomBytes(3).toString("hex")
    let counter = 0
    const namespace = Effect.acquireRelease(
      Effect.gen(function*() {
        const name = `contract-${runId}-${++counter}`
        const created = yield* admin.call("POST", "/api/v1/namespaces", {
          apiVersion: "v1",
          kind: "Namespace",
          metadata: { name, labels: { [CONTRACT_LABEL]: runId } }
        })
        if (created.status !== 201) return yield* Effect.dieMessage(`cannot create namespace ${name}: ${created.text}`)
        return name
      }),
      (name) => Effect.asVoid(admin.call("DELETE", `/api/v1/namespaces/${name}`))
    )
    const serviceAccount = (namespace: string, name: string) =>
      Effect.gen(function*() {
        yield* admin.call("POST", `/api/v1/namespaces/${namespace}/serviceaccounts`, {
          apiVersion: "v1",
          kind: "ServiceAccount",
          metadata: { name }
        })
        const token = yield* admin.call("POST", `/api/v1/namespaces/${namespace}/serviceaccounts/${name}/token`, {
          apiVersion: "authentication.k8s.io/v1",
          kind: "TokenRequest",
          spec: { expirationSeconds: 3600 }
        })
        if (token.status !== 201) return yield* Effect.dieMessage(`cannot get a token for ${name}: ${token.text}`)
        return yield* rawApi(kubeconfig, String(token.body.status.token))
      })
    return {
      name: real ? `kube-apiserver ${version.body?.gitVersion ?? ""}` : "LocalCluster",
      real,
      kubeconfig,
      admin,
      namespace,
      serviceAccount
    }
  })

/**
 * The contract's cluster for a test file: the real one when the run has one, else a
 * LocalCluster as close to it as it is made: HTTPS, authentication, RBAC, the garbage
 * collector and the EndpointSlice controller.
 */
export const ContractLive: Layer.Layer<Contract> = Layer.scoped(
  Contract,
  Effect.suspend(() => {
    const real = realKubeconfig()
    if (real !== undefined) return make(real, true)
    return Effect.gen(function*() {
      // Bookmarks every 2 s rather than kube-apiserver's minute: the contract is "within
      // 75 s", and npm test should not wait out a minute to see it kept.
      const cluster = yield* LocalCluster.make({
        auth: { rbac: true },
        controllerManager: true,
        bookmarkInterval: "2 seconds"
      })
      const kubeconfig = yield* tempKubeconfig
      yield* Effect.orDie(cluster.writeKubeconfig(kubeconfig))
      return yield* make(kubeconfig, false)
    }).pipe(Effect.orDie)
  })
)
