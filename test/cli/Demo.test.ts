/**
 * `session-routing demo`, the main job, run in-process through `Cli.run` on real
 * sockets and real time: hosts go pending → programmed in both modes, the workload
 * answers through the data plane, and the unclaimed host ends unprogrammed with its
 * reason while the data plane answers 404 for it.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import { answerLine, demoModes, unexpected, unexpectedFollowUps } from "../../src/cli/commands/Demo.js"
import { runCli } from "./TestCli.js"

const DOMAIN = "sessions.localtest.me"
// The diagnosis at the deadline: the class exists and ingress-nginx, its controller, wrote no
// address; the Gateway's class names a controller that never accepted it.
const INGRESS_UNCLAIMED =
  "unprogrammed: NoIngressStatus: IngressClass \"nginx\", controller \"k8s.io/ingress-nginx\", exists, but no address was written to the session Ingress's status in namespace \"telo-sessions\": ingress-nginx writes status only with --update-status"
const GATEWAY_UNCLAIMED =
  "unprogrammed: GatewayClassNotAccepted: GatewayClass \"external\" names controller \"example.com/external-gateway\", and no controller has accepted it"

/** The index of the first line that starts with `prefix`, failing the test when there is none. */
const lineIndex = (lines: ReadonlyArray<string>, prefix: string): number => {
  const index = lines.findIndex((line) => line.trim().startsWith(prefix))
  expect(index, `no line starts with ${JSON.stringify(prefix)} in:\n${lines.join("\n")}`).toBeGreaterThanOrEqual(0)
  return index
}

/** Each host of the session is pending first, then programmed, then served with the workload's answer. */
const expectServed = (lines: ReadonlyArray<string>, sessionId: string) => {
  for (const port of [8080, 9090]) {
    const host = `${port}-${sessionId}.${DOMAIN}`
    const pending = lineIndex(lines, `${host} pending`)
    const programmed = lineIndex(lines, `${host} programmed`)
    const answer = lineIndex(lines, `200 hello from session ${sessionId} port ${port}`)
    expect(pending).toBeLessThan(programmed)
    expect(programmed).toBeLessThan(answer)
  }
  lineIndex(lines, `unpublished session ${sessionId}`)
}

describe("session-routing demo", () => {
  it.live(
    "shows both modes programmed and served through the data plane, then an unclaimed Ingress reported with its reason",
    () =>
      Effect.gen(function*() {
        const result = yield* runCli(["demo"])
        expect(result.stderr).toBe("")
        expect(result.exitCode).toBe(0)
        const lines = result.stdout.split("\n")

        expect(lines[0]).toBe("session-routing demo: a session's routes, published and checked, on an embedded cluster")
        expect(lineIndex(lines, "API server")).toBeGreaterThan(0)
        expect(lines[lineIndex(lines, "API server")]).toMatch(/API server\s+http:\/\/127\.0\.0\.1:\d+\s+kubeconfig \S+/)
        expect(lines[lineIndex(lines, "data plane")]).toMatch(/data plane\s+http:\/\/127\.0\.0\.1:\d+/)

        const ingressStep = lineIndex(lines, "[1/4] ingress mode")
        const gatewayStep = lineIndex(lines, "[2/4] gateway mode")
        const failureStep = lineIndex(lines, "[3/4] what it catches")
        const controllerStep = lineIndex(lines, "[4/4] controller mode")
        expect(ingressStep).toBeLessThan(gatewayStep)
        expect(gatewayStep).toBeLessThan(failureStep)
        expect(failureStep).toBeLessThan(controllerStep)
        expect(lines[ingressStep + 2]).toBe(
          `published via ingress: 8080/tcp https://8080-demo-ingress.${DOMAIN}, 9090/tcp https://9090-demo-ingress.${DOMAIN}`
        )
        expectServed(lines, "demo-ingress")
        expectServed(lines, "demo-gateway")

        const unclaimed = `8080-demo-unclaimed.${DOMAIN}`
        const reason = lineIndex(lines, `${unclaimed} ${INGRESS_UNCLAIMED}`)
        expect(reason).toBeGreaterThan(lineIndex(lines, `${unclaimed} pending`))
        // What a user would have seen without the tool: a 404 that says nothing about why.
        expect(lines[reason + 2]?.trim()).toBe(
          `404 Not Found: no programmed Ingress or accepted HTTPRoute routes host "${unclaimed}" path "/"`
        )
        lineIndex(lines, "unpublished session demo-unclaimed")

        // The gated Pod is held out of Ready until its routes are programmed, then served.
        const held = lineIndex(
          lines,
          "Pod session-demo-controller: Ready=False (ReadinessGatesNotReady), readiness gate 0/1"
        )
        const open = lineIndex(lines, "Pod session-demo-controller: Ready=True, readiness gate 1/1")
        expect(held).toBeGreaterThan(controllerStep)
        expect(open).toBeGreaterThan(held)
        expect(lineIndex(lines, "200 hello from session demo-controller port 8080")).toBeGreaterThan(open)

        expect(lines.at(-2)).toMatch(
          /^done in \d+\.\d s: 5 hosts programmed and served; 1 host no controller claimed, reported unprogrammed; cluster stopped$/
        )
      }),
    60_000
  )

  it.live(
    "with --mode gateway shows only gateway mode, and its failure is an HTTPRoute no controller accepts",
    () =>
      Effect.gen(function*() {
        const result = yield* runCli(["demo", "--mode", "gateway"])
        expect(result.exitCode, result.stderr).toBe(0)
        const lines = result.stdout.split("\n")
        lineIndex(lines, "[1/3] gateway mode")
        lineIndex(lines, "[2/3] what it catches: HTTPRoutes no controller accepts")
        lineIndex(lines, "[3/3] controller mode")
        expectServed(lines, "demo-gateway")
        expect(result.stdout).not.toContain("demo-ingress")
        lineIndex(lines, `8080-demo-unclaimed.${DOMAIN} ${GATEWAY_UNCLAIMED}`)
      }),
    60_000
  )

  it.effect("refuses an unknown --mode with one line naming the flag", () =>
    Effect.gen(function*() {
      const result = yield* runCli(["demo", "--mode", "none"])
      expect(result).toEqual({
        exitCode: 1,
        stdout: "",
        stderr: "error: --mode=\"none\" must be one of ingress, gateway\n"
      })
    }))
})

describe("demo checks", () => {
  it("runs both modes, ingress first, when no --mode is given", () => {
    expect(demoModes(Option.none())).toEqual(["ingress", "gateway"])
    expect(demoModes(Option.some("gateway"))).toEqual(["gateway"])
  })

  // The demo checks its own story, so a regression makes it fail instead of printing a success it did not see.
  it("says what went wrong when a host that should be served was not", () => {
    const row = { port: 8080, host: "8080-x.example.test", state: "unprogrammed" as const, reason: "nobody" }
    expect(unexpected("served", [row], [])).toBe("8080-x.example.test ended unprogrammed (nobody), expected programmed")
    const programmed = { port: 8080, host: "8080-x.example.test", state: "programmed" as const }
    expect(
      unexpected("served", [programmed], [{
        row: programmed,
        answer: { status: 503, body: "503 no endpoints" },
        expected: "hi"
      }])
    ).toBe("8080-x.example.test answered 503 \"503 no endpoints\" through the data plane, expected 200 \"hi\"")
    expect(unexpected("unclaimed", [], [])).toBe("no host was published")
    expect(unexpected("unclaimed", [row], [{ row, answer: { status: 404, body: "404 Not Found" }, expected: "hi" }]))
      .toBeUndefined()
  })

  it("asks the Pod's Events for the verdict's reason, not for the publish its verdict already tells", () => {
    const programmed = { port: 8080, host: "8080-x.example.test", state: "programmed" as const, probe: "200" }
    expect(unexpectedFollowUps("served", [programmed], ["RouteProgrammed"])).toBeUndefined()
    expect(unexpectedFollowUps("served", [programmed], ["RoutesPublished"])).toBe(
      "the session Pod has no RouteProgrammed Event"
    )
    expect(unexpectedFollowUps("unclaimed", [], ["RouteUnprogrammed"])).toBeUndefined()
    expect(unexpectedFollowUps("unclaimed", [], [])).toBe("the session Pod has no RouteUnprogrammed Event")
    expect(unexpectedFollowUps("served", [{ ...programmed, probe: "503" }], ["RouteProgrammed"])).toBe(
      "8080-x.example.test's probe said 503, expected 200"
    )
  })

  it("prints the data plane's own answers without repeating their status", () => {
    expect(answerLine({ status: 404, body: "404 Not Found: no route" })).toBe("404 Not Found: no route")
    expect(answerLine({ status: 200, body: "hello from session s port 8080" })).toBe(
      "200 hello from session s port 8080"
    )
  })
})
