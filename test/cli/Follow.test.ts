/**
 * `publish --follow` end to end: it keeps reading the session's hosts after the
 * watch and prints each change until interrupted, so the test reads its stdout
 * line by line while it runs (the shared harness only returns output at the end).
 */
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Fiber, Option } from "effect"
import { IngressResource } from "../../src/domain/Resources.js"
import { GONE_REASON } from "../../src/runner/FollowSession.js"
import { cliCluster, settledInPortOrder } from "./CliCluster.js"
import { publishArgs, streamingCli } from "./TestCli.js"

const sessionId = "f0ll0w"
const hostOf = (port: number) => `${port}-${sessionId}.sessions.localtest.me`

describe("session-routing publish --follow", () => {
  it.live("keeps watching after every host settled and reports the hosts whose Ingress was deleted", () =>
    Effect.scoped(
      Effect.gen(function*() {
        const cluster = yield* cliCluster({ ingress: { delay: Duration.millis(50) }, gateway: false })
        const cli = yield* streamingCli(
          publishArgs(sessionId, [8080, 9090], "--kubeconfig", cluster.kubeconfig, "--follow", "-o", "json"),
          cluster.env
        )
        const watched = yield* cli.next(5)
        expect(settledInPortOrder(watched).slice(1)).toEqual([
          { type: "route", port: 8080, host: hostOf(8080), state: "pending" },
          { type: "route", port: 9090, host: hostOf(9090), state: "pending" },
          { type: "route", port: 8080, host: hostOf(8080), state: "programmed" },
          { type: "route", port: 9090, host: hostOf(9090), state: "programmed" }
        ])
        // Still running: every host is terminal, yet --follow does not exit.
        expect(Option.isNone(yield* Fiber.poll(cli.fiber))).toBe(true)

        yield* cluster.cluster.store.delete(IngressResource, cluster.namespace, `telo-run-${sessionId}`)
        expect(yield* cli.next(2)).toEqual([
          {
            type: "route",
            port: 8080,
            host: hostOf(8080),
            state: "unprogrammed",
            reason: GONE_REASON,
            code: "RouteDeleted"
          },
          {
            type: "route",
            port: 9090,
            host: hostOf(9090),
            state: "unprogrammed",
            reason: GONE_REASON,
            code: "RouteDeleted"
          }
        ])
        yield* Fiber.interrupt(cli.fiber)
      })
    ))
})
