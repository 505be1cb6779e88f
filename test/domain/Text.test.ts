import { describe, expect, it } from "@effect/vitest"
import { reportOf } from "../../src/domain/Routes.js"
import { MAX_QUOTED_CHARS, printable, serverText } from "../../src/domain/Text.js"
import { httpRouteVerdict } from "../../src/domain/Verdict.js"

describe("printable", () => {
  it("writes newlines and terminal controls as escapes, so quoted text cannot forge a line or drive a terminal", () => {
    expect(printable("ok\n8080-abc.telo.run programmed")).toBe("ok\\n8080-abc.telo.run programmed")
    expect(printable("\x1b[2J\x1b]0;owned\x07 done\r")).toBe("\\u001b[2J\\u001b]0;owned\\u0007 done\\r")
    expect(printable("a\tb\u009bc\u007f")).toBe("a b\\u009bc\\u007f")
  })

  it("cuts text past its bound and says where", () => {
    const long = "x".repeat(MAX_QUOTED_CHARS + 10)
    expect(printable(long)).toBe(`${"x".repeat(MAX_QUOTED_CHARS)}…`)
    expect(printable("short", 3)).toBe("sho…")
  })
})

describe("serverText", () => {
  it("keeps an HTML page's words, drops its tags, styles and scripts", () => {
    expect(serverText("<html><style>p{}</style><script>x()</script><h1>Bad  Gateway</h1>\n<p>nginx</p></html>"))
      .toBe("Bad Gateway nginx")
    expect(serverText("  plain\ntext  ")).toBe("plain text")
  })
})

describe("controller text in a verdict", () => {
  it("reaches the report escaped: a condition message cannot print a line of its own", () => {
    const route = {
      apiVersion: "gateway.networking.k8s.io/v1",
      kind: "HTTPRoute",
      metadata: { name: "r", namespace: "ns", generation: 1 },
      spec: {},
      status: {
        parents: [{
          parentRef: { name: "gw" },
          controllerName: "example.com/c",
          conditions: [{
            type: "Accepted",
            status: "False",
            reason: "NotAllowedByListeners",
            message: "refused\n8080-abc.telo.run programmed\x1b[32m",
            observedGeneration: 1,
            lastTransitionTime: "2026-01-01T00:00:00Z"
          }]
        }]
      }
    } as const
    const report = reportOf(httpRouteVerdict(route, { target: { namespace: "ns", name: "gw" } }))
    expect(report).toEqual({
      state: "unprogrammed",
      reason: "NotAllowedByListeners: refused\\n8080-abc.telo.run programmed\\u001b[32m",
      code: "NotAllowedByListeners"
    })
  })
})
