/**
 * What the examples' tests give a runner: a SessionCluster over HTTP whose controllers
 * program a route 50 ms after it is written, and the environment the runner is
 * configured from (the cluster's kubeconfig in a directory of the test's scope, its base
 * domain and ingress class, and `settings`).
 */
import { SessionCluster } from "@session-routing/local-cluster"
import { ConfigProvider, Duration, Effect } from "effect"
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"

export const runnerEnvironment = (settings: Readonly<Record<string, string>>) =>
  Effect.gen(function*() {
    const sc = yield* SessionCluster.make({ ingress: { delay: Duration.millis(50) }, dataPlane: false })
    const dir = yield* Effect.acquireRelease(
      Effect.promise(() => mkdtemp(join(tmpdir(), "session-routing-runner-"))),
      (path) => Effect.promise(() => rm(path, { recursive: true, force: true }))
    )
    const kubeconfig = join(dir, "kubeconfig")
    yield* sc.cluster.writeKubeconfig(kubeconfig)
    // KUBECONFIG for the client, the rest for RouterConfig.
    const env = new Map([
      ["KUBECONFIG", kubeconfig],
      ["SESSION_ROUTING_BASE_DOMAIN", sc.baseDomain],
      ["SESSION_INGRESS_CLASS", sc.ingressClassName],
      ...Object.entries(settings)
    ])
    return { sc, config: ConfigProvider.fromMap(env, { pathDelim: "_" }) }
  })
