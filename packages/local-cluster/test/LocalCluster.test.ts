/**
 * The LocalCluster facade: its kubeconfig reaches the server through client-node,
 * controllers run for the life of the cluster, and the in-memory KubeClient layer
 * sees the same store the HTTP face serves.
 */
import { describe, expect, it } from "@effect/vitest"
import { KubeConfig } from "@kubernetes/client-node"
import { Deferred, Effect, Exit, Scope } from "effect"
import { readFile, stat } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { KubeClient, type KubeObject, type ResourceType } from "session-routing/kubernetes"
import { parse } from "yaml"
import { kubeconfigFor, LocalCluster } from "../src/LocalCluster.js"
import { GatewayClassResource, GatewayResource, HttpRouteResource, IngressResource } from "../src/ServedResources.js"
import { ingress, NS } from "./ClusterFixtures.js"

describe("LocalCluster", () => {
  it("writes a kubeconfig client-node accepts for a plain-HTTP server", () => {
    const text = kubeconfigFor("http://127.0.0.1:1234")
    expect(parse(text)).toEqual({
      apiVersion: "v1",
      kind: "Config",
      clusters: [{
        name: "local-cluster",
        cluster: { server: "http://127.0.0.1:1234", "insecure-skip-tls-verify": true }
      }],
      users: [{ name: "local-cluster-user", user: { token: "local-cluster" } }],
      contexts: [{
        name: "local-cluster",
        context: { cluster: "local-cluster", user: "local-cluster-user", namespace: "default" }
      }],
      "current-context": "local-cluster",
      preferences: {}
    })
    const config = new KubeConfig()
    config.loadFromString(text)
    expect(config.getCurrentCluster()).toMatchObject({ server: "http://127.0.0.1:1234", skipTLSVerify: true })
    expect(config.getCurrentUser()?.name).toBe("local-cluster-user")
  })

  it.scopedLive("serves on 127.0.0.1 and writes its kubeconfig to a file only its owner reads", () =>
    Effect.gen(function*() {
      const cluster = yield* LocalCluster.make({ namespaces: [NS] })
      expect(cluster.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
      const path = join(tmpdir(), `local-cluster-${process.pid}-${Date.now()}.yaml`)
      yield* cluster.writeKubeconfig(path)
      expect(yield* Effect.promise(() => readFile(path, "utf8"))).toBe(cluster.kubeconfig())
      expect(((yield* Effect.promise(() => stat(path))).mode & 0o777).toString(8)).toBe("600")
      const failed = yield* Effect.flip(cluster.writeKubeconfig("/nonexistent/dir/kubeconfig"))
      expect(failed._tag).toBe("KubeconfigWriteError")
    }))

  it.live("runs its controllers for as long as it lives", () =>
    Effect.gen(function*() {
      const started = yield* Deferred.make<void>()
      const stopped = yield* Deferred.make<void>()
      const scope = yield* Scope.make()
      yield* Scope.extend(
        LocalCluster.makeInMemory({
          namespaces: [NS],
          controllers: [({ store }) =>
            Effect.gen(function*() {
              yield* Effect.addFinalizer(() => Deferred.succeed(stopped, undefined))
              yield* store.create(IngressResource, NS, ingress("from-controller"))
              yield* Deferred.succeed(started, undefined)
              return yield* Effect.never
            }).pipe(Effect.orDie)]
        }),
        scope
      )
      yield* Deferred.await(started)
      yield* Scope.close(scope, Exit.void)
      yield* Deferred.await(stopped)
    }))

  it.scoped("offers the same cluster as an in-memory KubeClient", () =>
    Effect.gen(function*() {
      const cluster = yield* LocalCluster.makeInMemory({ namespaces: [NS] })
      yield* cluster.store.create(IngressResource, NS, ingress("web"))
      const got = yield* Effect.provide(
        Effect.flatMap(KubeClient, (client) => client.get(IngressResource, NS, "web")),
        LocalCluster.layerKubeClient(cluster)
      )
      expect(got.metadata?.name).toBe("web")
    }))

  it.scoped("leaves the Gateway API out when told its CRDs are not installed", () =>
    Effect.gen(function*() {
      const cluster = yield* LocalCluster.makeInMemory({ namespaces: [NS], gatewayApi: false })
      const error = yield* Effect.provide(
        Effect.flip(Effect.flatMap(KubeClient, (client) => client.list(HttpRouteResource, NS))),
        LocalCluster.layerKubeClient(cluster)
      )
      expect(error._tag).toBe("NotServed")
      for (const resource of [GatewayResource, GatewayClassResource]) {
        expect(yield* cluster.store.isServed(resource as ResourceType<KubeObject>)).toBe(false)
      }
    }))
})
