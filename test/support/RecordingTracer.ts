/**
 * An Effect `Tracer` that keeps every span in memory, for tests that check which
 * spans a program made, with what attributes and events, under which parent.
 */
import { Effect, Exit, Layer, Option, Tracer } from "effect"

/** One span as the test reads it. */
export interface RecordedSpan {
  readonly name: string
  readonly spanId: string
  readonly traceId: string
  /** The parent's span id, when the span has one. */
  readonly parentId: string | undefined
  readonly kind: Tracer.SpanKind
  readonly attributes: Map<string, unknown>
  readonly events: Array<{ readonly name: string; readonly attributes: Record<string, unknown> }>
  /** `open` until ended, then how it ended. */
  ended: "open" | "ok" | "error"
}

/** A tracer and the spans it recorded so far. */
export const recordingTracer = () => {
  const spans: Array<RecordedSpan> = []
  let next = 0
  const tracer = Tracer.make({
    span: (name, parent, context, links, startTime, kind): Tracer.Span => {
      next += 1
      const parentSpan = Option.getOrUndefined(parent)
      const record: RecordedSpan = {
        name,
        spanId: `span-${next}`,
        traceId: parentSpan?.traceId ?? `trace-${next}`,
        parentId: parentSpan?.spanId,
        kind,
        attributes: new Map(),
        events: [],
        ended: "open"
      }
      spans.push(record)
      let status: Tracer.SpanStatus = { _tag: "Started", startTime }
      return {
        _tag: "Span",
        name,
        spanId: record.spanId,
        traceId: record.traceId,
        parent,
        context,
        get status() {
          return status
        },
        attributes: record.attributes,
        links,
        sampled: true,
        kind,
        end: (endTime, exit) => {
          status = { _tag: "Ended", startTime, endTime, exit }
          record.ended = Exit.isSuccess(exit) ? "ok" : "error"
        },
        attribute: (key, value) => {
          record.attributes.set(key, value)
        },
        event: (eventName, _time, attributes) => {
          record.events.push({ name: eventName, attributes: attributes ?? {} })
        },
        addLinks: () => {}
      }
    },
    context: (f) => f()
  })
  return {
    layer: Layer.setTracer(tracer),
    spans: (): ReadonlyArray<RecordedSpan> => spans,
    /** The spans named `name`. */
    named: (name: string): ReadonlyArray<RecordedSpan> => spans.filter((span) => span.name === name),
    /** The spans whose parent is `parent`. */
    childrenOf: (parent: RecordedSpan): ReadonlyArray<RecordedSpan> =>
      spans.filter((span) => span.parentId === parent.spanId),
    /** Runs `self` with this tracer. */
    traced: <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> => Effect.withTracer(self, tracer)
  }
}
