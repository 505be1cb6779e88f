/**
 * Leader election against an API server that refuses the connection, over the live
 * client: each try says the connection was refused. The client's own retries of a
 * refused connection outlast a try's time limit (half the renew deadline), and when
 * they ran inside it the try was cut off and said "no answer within 5s" instead.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, Layer, Logger, LogLevel } from "effect"
import * as net from "node:net"
import { KubeClientLive } from "../../../src/layers/KubeClientLive.js"
import { runElected } from "../../../src/runner/controller/LeaderElection.js"
import { kubeConfigFor } from "../../support/KubeConfigs.js"

/** A port nothing listens on: bound, then released. */
const closedPort = Effect.promise(
  () =>
    new Promise<number>((resolve) => {
      const server = net.createServer()
      server.listen(0, "127.0.0.1", () => {
        const port = (server.address() as net.AddressInfo).port
        server.close(() => resolve(port))
      })
    })
)

describe("leader election against a server that refuses connections", () => {
  it.live("says each try was refused, never that it had no answer", () =>
    Effect.gen(function*() {
      const port = yield* closedPort
      const server = `http://127.0.0.1:${port}`
      const client = yield* KubeClientLive.make(kubeConfigFor(server))
      const warnings: Array<string> = []
      const capture = Layer.merge(
        Logger.replace(
          Logger.defaultLogger,
          Logger.make(({ logLevel, message }) => {
            if (logLevel === LogLevel.Warning) warnings.push([message].flat().map(String).join(" "))
          })
        ),
        Logger.minimumLogLevel(LogLevel.Warning)
      )
      // A try may take 1 s (half the renew deadline), less than the 3 s the client
      // would spend retrying a refused connection.
      const candidate = yield* Effect.fork(
        runElected(client.leases!, {
          namespace: "controllers",
          name: "session-routing",
          identity: "a",
          leaseDuration: "3 seconds",
          renewDeadline: "2 seconds",
          retryPeriod: "500 millis"
        }, Effect.never).pipe(Effect.provide(capture))
      )
      // Long enough for several tries, each cut at 1 s before the fix.
      yield* Effect.sleep("2500 millis")
      yield* Fiber.interrupt(candidate)
      // A warning once per kind of failure: one, since every try failed alike.
      expect(warnings).toEqual([
        `could not try to take Lease controllers/session-routing: could not get leases.coordination.k8s.io ` +
        `"session-routing" in namespace "controllers" at ${server}: the connection was refused (is the API ` +
        `server running, and is the kubeconfig's server address right?) (ECONNREFUSED)`
      ])
    }))
})
