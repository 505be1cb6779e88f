/**
 * What a Pod's routes condition says, whatever the Pod or a server put in its words:
 * every value taken from the Pod (label and annotation values, names) and every reason
 * a server or a probe gave is escaped and bounded, and the message as a whole is at
 * most `MAX_CONDITION_MESSAGE_CHARS`. A 200 KB annotation once made a 400 KB condition,
 * its control and bidi characters intact, in an object every kubelet and watcher reads.
 */
import { describe, expect, it } from "@effect/vitest"
import { Either } from "effect"
import type { Pod } from "../../src/domain/Objects.js"
import {
  MAX_CONDITION_MESSAGE_CHARS,
  type PodHost,
  podSession,
  PORTS_ANNOTATION,
  routesCondition,
  SESSION_LABEL
} from "../../src/domain/PodRouting.js"
import { MAX_QUOTED_CHARS } from "../../src/domain/Text.js"

/** Any control, format (bidi, zero-width), line or paragraph separator character, or lone surrogate. */
const UNPRINTABLE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}]/u

const pod = (
  metadata: {
    readonly name?: string
    readonly labels?: Record<string, string>
    readonly annotations?: Record<string, string>
  }
): Pod => ({
  metadata: { namespace: "sessions", name: metadata.name ?? "p", uid: "u-1", ...metadata },
  spec: { containers: [{ name: "a", ports: [{ containerPort: 8080 }] }] }
})

/** The condition a Pod that cannot be routed gets. */
const invalidCondition = (p: Pod) => {
  const session = podSession(p)
  if (Either.isRight(session)) throw new Error("expected the Pod to be refused")
  return routesCondition({ _tag: "Invalid", problem: session.left })
}

describe("the routes condition's message", () => {
  it("quotes a 200 KB ports annotation bounded, and stays within its own bound", () => {
    const annotation = `8080,${"9".repeat(200_000)}`
    const condition = invalidCondition(
      pod({ labels: { [SESSION_LABEL]: "abc" }, annotations: { [PORTS_ANNOTATION]: annotation } })
    )
    expect(condition.reason).toBe("InvalidPortsAnnotation")
    expect(condition.message!.length).toBeLessThanOrEqual(MAX_CONDITION_MESSAGE_CHARS + 1)
    // The annotation and the problem that quotes it are each cut, so both are there to read.
    expect(condition.message).toMatch(
      new RegExp(`^Pod sessions/p: annotation ${PORTS_ANNOTATION}="8080,9{100,}…: port "9{100,}…$`)
    )
  })

  it("escapes control and bidi characters from the Pod's annotation, label and name", () => {
    const annotation = "8080,\u202e0909\u202c\n\u001b[2Jforged line"
    const fromAnnotation = invalidCondition(
      pod({ labels: { [SESSION_LABEL]: "abc" }, annotations: { [PORTS_ANNOTATION]: annotation } })
    )
    expect(fromAnnotation.message).toBe(
      // JSON's escapes for the controls, printable's for the bidi characters it leaves.
      `Pod sessions/p: annotation ${PORTS_ANNOTATION}="8080,\\u202e0909\\u202c\\n\\u001b[2Jforged line": ` +
        `port "\\u202e0909\\u202c\\n\\u001b[2Jforged line" is not of the form PORT or PORT/tcp or PORT/udp (e.g. 8080, 5000/udp)`
    )
    const fromLabel = invalidCondition(pod({ name: "p\u2066x\u2069", labels: { [SESSION_LABEL]: "a\u202eb" } }))
    expect(fromLabel.message).toContain(`Pod sessions/p\\u2066x\\u2069: label ${SESSION_LABEL}="a\\u202eb": `)
    for (const message of [fromAnnotation.message!, fromLabel.message!]) expect(message).not.toMatch(UNPRINTABLE)
  })

  it("bounds and escapes each host's and probe's reason from a server, and the whole message", () => {
    const hostile = `refused \u202eNOTICE\u202c\n${"x".repeat(100_000)}`
    const hosts: ReadonlyArray<PodHost> = Array.from({ length: 5 }, (_, i) => ({
      host: `808${i}-abc.sessions.example.com`,
      state: "unprogrammed",
      code: "NotAllowedByListeners",
      reason: hostile
    }))
    const failed = routesCondition({ _tag: "Hosts", hosts })
    expect(failed.message!.length).toBeLessThanOrEqual(MAX_CONDITION_MESSAGE_CHARS + 1)
    expect(failed.message).not.toMatch(UNPRINTABLE)
    // The first host's reason is cut at its own bound, so the next host is named too.
    const [first] = failed.message!.split("; ")
    expect(first!.length).toBeLessThanOrEqual("8080-abc.sessions.example.com: ".length + MAX_QUOTED_CHARS + 1)
    expect(first).toMatch(/^8080-abc\.sessions\.example\.com: refused \\u202eNOTICE\\u202c\\nx+…$/)
    expect(failed.message).toContain("8081-abc.sessions.example.com: refused")

    const probing = routesCondition({
      _tag: "Hosts",
      hosts: [{
        host: "8080-abc.sessions.example.com",
        state: "programmed",
        probe: { passed: 1, required: 3, reason: hostile }
      }]
    })
    expect(probing.reason).toBe("ProbePending")
    expect(probing.message!.length).toBeLessThanOrEqual(MAX_CONDITION_MESSAGE_CHARS + 1)
    expect(probing.message).toMatch(
      /^8080-abc\.sessions\.example\.com: 1 of 3 probes in a row reached it; the last: refused \\u202eNOTICE/
    )
  })

  it("escapes and bounds a publish failure's reason and the Pod another session's routes belong to", () => {
    const publish = routesCondition({ _tag: "PublishFailed", reason: `could not apply: \u2067${"y".repeat(5_000)}` })
    expect(publish.message!.length).toBe(MAX_CONDITION_MESSAGE_CHARS + 1)
    expect(publish.message).toMatch(/^could not apply: \\u2067y+…$/)
    const taken = routesCondition({ _tag: "Taken", sessionId: "abc", byPod: "sessions/other\u202e" })
    expect(taken.message).toBe(
      "session abc is already routed for Pod sessions/other\\u202e: give each Pod its own session id"
    )
  })
})
