/**
 * Spans are made only for a tracer that keeps them: under Effect's own tracer (which a
 * fiber has unless a layer installs another) no span is made and its options are never
 * built; under any other, the span is made as `Effect.withSpan` would make it.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import { whenTraced, withSpanWhenTraced } from "../../src/services/Telemetry.js"
import { recordingTracer } from "../support/RecordingTracer.js"

/** The name of the span the effect runs in, if any. */
const currentSpanName = Effect.map(Effect.option(Effect.currentSpan), Option.map((span) => span.name))

describe("withSpanWhenTraced", () => {
  it.effect("makes no span, and builds no options, under Effect's own tracer", () =>
    Effect.gen(function*() {
      let built = 0
      const inside = yield* currentSpanName.pipe(
        withSpanWhenTraced("work", () => {
          built += 1
          return { attributes: { "k8s.verb": "get" } }
        })
      )
      expect(inside).toEqual(Option.none())
      expect(built).toBe(0)
    }))

  it.effect("makes the span, with its options, under any other tracer", () =>
    Effect.gen(function*() {
      const recorder = recordingTracer()
      const inside = yield* recorder.traced(
        currentSpanName.pipe(withSpanWhenTraced("work", () => ({ kind: "client", attributes: { "k8s.verb": "get" } })))
      )
      expect(inside).toEqual(Option.some("work"))
      expect(recorder.named("work").map((span) => [span.kind, span.attributes.get("k8s.verb"), span.ended])).toEqual([
        ["client", "get", "ok"]
      ])
    }))
})

describe("whenTraced", () => {
  it.effect("picks by the fiber's tracer, each time it runs", () =>
    Effect.gen(function*() {
      const which = whenTraced(() => Effect.succeed("traced"), () => Effect.succeed("untraced"))
      expect(yield* which).toBe("untraced")
      expect(yield* recordingTracer().traced(which)).toBe("traced")
      expect(yield* which).toBe("untraced")
    }))
})
