import { describe, expect, it } from "@effect/vitest"
import { Either } from "effect"
import type { Pod } from "../../src/domain/Objects.js"
import {
  type PodHost,
  podSession,
  PORTS_ANNOTATION,
  ROUTES_CONDITION,
  routesCondition,
  samePorts,
  SESSION_LABEL,
  shardOf
} from "../../src/domain/PodRouting.js"

const pod = (
  labels: Record<string, string>,
  options: {
    readonly annotations?: Record<string, string>
    readonly ports?: ReadonlyArray<{ containerPort: number; protocol?: "TCP" | "UDP" | "SCTP" }>
  } = {}
): Pod => ({
  metadata: {
    namespace: "sessions",
    name: "p",
    uid: "u-1",
    labels,
    ...(options.annotations !== undefined ? { annotations: options.annotations } : {})
  },
  spec: { containers: [{ name: "a", ports: options.ports ?? [] }, { name: "b", ports: [{ containerPort: 8080 }] }] }
})

describe("the session a Pod declares", () => {
  it("takes the id from the label and the ports its containers declare, once each, SCTP left out", () => {
    expect(
      podSession(pod({ [SESSION_LABEL]: "abc" }, {
        ports: [{ containerPort: 8080, protocol: "TCP" }, { containerPort: 5000, protocol: "UDP" }, {
          containerPort: 9,
          protocol: "SCTP"
        }]
      }))
    ).toEqual(Either.right({
      namespace: "sessions",
      podName: "p",
      podUid: "u-1",
      sessionId: "abc",
      ports: [{ port: 8080, protocol: "tcp" }, { port: 5000, protocol: "udp" }]
    }))
  })

  it("takes the ports from the annotation when it is set, whatever the containers declare", () => {
    const declared = podSession(
      pod({ [SESSION_LABEL]: "abc" }, { annotations: { [PORTS_ANNOTATION]: "9090, 5000/udp" } })
    )
    expect(Either.map(declared, (s) => s.ports)).toEqual(
      Either.right([{ port: 9090, protocol: "tcp" }, { port: 5000, protocol: "udp" }])
    )
  })

  it("reads the session id from another label when told to", () => {
    expect(Either.map(podSession(pod({ "example.com/sid": "xyz" }), "example.com/sid"), (s) => s.sessionId)).toEqual(
      Either.right("xyz")
    )
  })

  it("names the label, the annotation or the missing ports that make a Pod unroutable", () => {
    expect(podSession(pod({ [SESSION_LABEL]: "Not_Valid" }))).toMatchObject(
      Either.left({ code: "InvalidSessionLabel" })
    )
    expect(
      Either.getLeft(podSession(pod({ [SESSION_LABEL]: "Not_Valid" }))).pipe((o) =>
        o._tag === "Some" && o.value.message
      )
    )
      .toContain(`label ${SESSION_LABEL}="Not_Valid"`)
    expect(podSession(pod({ [SESSION_LABEL]: "abc" }, { annotations: { [PORTS_ANNOTATION]: "8080,8080" } })))
      .toMatchObject(Either.left({ code: "InvalidPortsAnnotation" }))
    expect(podSession(pod({ [SESSION_LABEL]: "abc" }, { annotations: { [PORTS_ANNOTATION]: "70000" } }))).toEqual(
      Either.left({
        code: "InvalidPortsAnnotation",
        message: `Pod sessions/p: annotation ${PORTS_ANNOTATION}="70000": port "70000": 70000 is outside 1..65535`
      })
    )
    const bare: Pod = { metadata: { namespace: "sessions", name: "p", labels: { [SESSION_LABEL]: "abc" } } }
    expect(podSession(bare)).toMatchObject(Either.left({ code: "NoPorts" }))
    expect(podSession(pod({ [SESSION_LABEL]: "abc" }, { annotations: { [PORTS_ANNOTATION]: "" } }))).toMatchObject(
      Either.left({ code: "NoPorts" })
    )
  })

  it("compares ports whatever their order", () => {
    const a = [{ port: 1, protocol: "tcp" as const }, { port: 2, protocol: "udp" as const }]
    expect(samePorts(a, [...a].reverse())).toBe(true)
    expect(samePorts(a, [{ port: 1, protocol: "tcp" }, { port: 2, protocol: "tcp" }])).toBe(false)
    expect(samePorts(a, a.slice(0, 1))).toBe(false)
  })
})

describe("the shard of a session", () => {
  // Pinned values: a replica written in another language must compute the same.
  it("is FNV-1a of the id, mixed by MurmurHash3's finalizer, scaled to the shard count", () => {
    // FNV-1a 32 of "a" is 0xe40c292c, of "" the offset basis 0x811c9dc5; fmix32 of those
    // is 0x1a80b1b3 and 0xab3e7c0b.
    expect(shardOf("a", 1_000)).toBe(Math.floor((0x1a80b1b3 * 1_000) / 2 ** 32))
    expect(shardOf("", 7)).toBe(Math.floor((0xab3e7c0b * 7) / 2 ** 32))
    expect(shardOf("a", 1)).toBe(0)
  })

  // Structured ids that differ in their last characters: FNV-1a alone gave 0/20/22/58.
  it("spreads ids that differ only at their end evenly over the shards", () => {
    const counts = [0, 0, 0, 0]
    for (let i = 0; i < 100; i++) counts[shardOf(`user7-${i}`, 4)]!++
    for (const count of counts) expect(count).toBeGreaterThanOrEqual(15)
  })

  it("spreads ids over every shard count, two included", () => {
    for (const shards of [2, 3, 4]) {
      const counts = Array.from({ length: shards }, () => 0)
      for (let i = 0; i < 3_000; i++) counts[shardOf(`s${i}x`, shards)]!++
      for (const count of counts) expect(count).toBeGreaterThan((3_000 / shards) * 0.8)
    }
    // Ids whose bytes have the same parity: a remainder of 2 put all of these in one shard.
    const counts = [0, 0]
    for (const id of ["s-one", "s-two", "s-three", "s-four", "s-five", "s-six", "s-seven", "s-eight"]) {
      counts[shardOf(id, 2)]!++
    }
    expect(counts.every((count) => count > 0)).toBe(true)
  })
})

describe("the condition a Pod's routes give it", () => {
  const host = (name: string, state: PodHost["state"], code?: string): PodHost => ({
    host: name,
    state,
    ...(code !== undefined ? { reason: `${code}: why`, code } : {})
  })

  it("is True once every host is programmed, or when there is no host to route", () => {
    expect(routesCondition({ _tag: "Hosts", hosts: [host("a", "programmed"), host("b", "programmed")] })).toEqual({
      type: ROUTES_CONDITION,
      status: "True",
      reason: "RoutesProgrammed",
      message: "every host is programmed: a, b"
    })
    expect(routesCondition({ _tag: "Hosts", hosts: [] })).toMatchObject({ status: "True", reason: "NoHttpPorts" })
  })

  it("is Unknown while a host is pending, naming those it waits for", () => {
    expect(routesCondition({ _tag: "Hosts", hosts: [host("a", "programmed"), host("b", "pending")] })).toMatchObject({
      status: "Unknown",
      reason: "RoutesPending",
      message: "1 of 2 hosts programmed; waiting for b"
    })
  })

  it("is False with the first unprogrammed host's code, and every such host's reason", () => {
    expect(
      routesCondition({
        _tag: "Hosts",
        hosts: [host("a", "unprogrammed", "IngressClassNotFound"), host("b", "pending"), host("c", "unprogrammed", "X")]
      })
    ).toEqual({
      type: ROUTES_CONDITION,
      status: "False",
      reason: "IngressClassNotFound",
      message: "a: IngressClassNotFound: why; c: X: why"
    })
  })

  it("is Unknown, never False, when a host's status could not be read", () => {
    expect(
      routesCondition({
        _tag: "Hosts",
        hosts: [host("a", "programmed"), host("b", "unprogrammed", "RouteStatusUnreadable")]
      })
    ).toMatchObject({ status: "Unknown", reason: "RouteStatusUnreadable", message: "b: RouteStatusUnreadable: why" })
    // A host that a controller refused still decides.
    expect(
      routesCondition({
        _tag: "Hosts",
        hosts: [host("a", "unprogrammed", "RouteStatusUnreadable"), host("b", "unprogrammed", "NotAllowedByListeners")]
      })
    ).toMatchObject({ status: "False", reason: "NotAllowedByListeners" })
  })

  it("is False with what made the Pod unroutable or its publish fail", () => {
    expect(routesCondition({ _tag: "Invalid", problem: { code: "NoPorts", message: "m" } })).toMatchObject({
      status: "False",
      reason: "NoPorts",
      message: "m"
    })
    expect(routesCondition({ _tag: "PublishFailed", reason: "could not apply" })).toMatchObject({
      status: "False",
      reason: "PublishFailed",
      message: "could not apply"
    })
    expect(routesCondition({ _tag: "Taken", sessionId: "s", byPod: "other" })).toMatchObject({
      status: "False",
      reason: "SessionTaken",
      message: "session s is already routed for Pod other: give each Pod its own session id"
    })
  })
})
