/**
 * The resuming watch every KubeClient layer shares: list-then-watch, reconnect from
 * the last seen resourceVersion, and relist on 410 Expired emitting only the
 * difference, so a consumer sees each change exactly once whatever the wire did. A
 * connection that goes silent past its progress deadline is closed and resumed.
 */
import { Chunk, Context, Duration, Effect, Metric, Option, Ref, Schedule, Stream, Tracer } from "effect"
import type { KubeObject } from "../../domain/Objects.js"
import { qualifiedName, type ResourceType } from "../../domain/Resources.js"
import type {
  KubeClient,
  KubeClientPrimitives,
  RawWatchEvent,
  ReadableObject,
  WatchEvent,
  WatchOptions
} from "../../services/KubeClient.js"
import { objectKey } from "../../services/KubeClient.js"
import { BadRequest, isTransient, type KubeError, Transport } from "../../services/KubeError.js"
import { watchRelists, watchRestarts } from "../../services/Telemetry.js"
import { whenDebug } from "./DebugLog.js"

/**
 * Delay between reconnection attempts after a transient failure (or a connection
 * that closed without sending anything): 200ms doubling, jittered, at most 5s apart,
 * and at most 8 attempts in a row before the watch fails with the last error. Any
 * connection that delivers an event resets it.
 */
export const watchReconnectSchedule: Schedule.Schedule<unknown, KubeError> = Schedule.exponential("200 millis").pipe(
  Schedule.jittered,
  Schedule.either(Schedule.spaced("5 seconds")),
  Schedule.intersect(Schedule.recurs(8))
)

/**
 * How long a watch connection may deliver neither an event nor a bookmark before it is
 * closed and resumed from its last resourceVersion. Every connection asks for bookmarks
 * (`allowWatchBookmarks`), and kube-apiserver sends each watch that asks one roughly
 * every minute (its watch cache's bookmark frequency, checked on a timer of about a
 * second) besides one just before the watch times out. A connection quiet for that
 * minute and half of it again is not a quiet namespace but a watch that stopped: a
 * proxy that lost its upstream, a server whose watch cache stalled while it answers
 * every other call. Closing one wrongly costs one reconnection and loses nothing, so
 * the margin need not be wide; a server that sends no periodic bookmarks gets its quiet
 * watches reconnected once per deadline.
 */
export const WATCH_PROGRESS_DEADLINE: Duration.Duration = Duration.seconds(90)

export interface ResumableWatchOptions {
  /** Replaces `watchReconnectSchedule` (tests use fixed delays). */
  readonly reconnectSchedule?: Schedule.Schedule<unknown, KubeError>
  /** Replaces `WATCH_PROGRESS_DEADLINE`, for a server that sends bookmarks at another pace. */
  readonly progressDeadline?: Duration.DurationInput
}

/** The full service from a layer's primitives: they plus the resuming `watch`. */
export const makeKubeClient = (
  primitives: KubeClientPrimitives,
  options?: ResumableWatchOptions
): KubeClient.Service => ({
  ...primitives,
  get: (resource, namespace, name) =>
    Effect.zipRight(inScope("get", resource, namespace, name), primitives.get(resource, namespace, name)),
  list: (resource, namespace, listOptions) =>
    Effect.zipRight(inScope("list", resource, namespace), primitives.list(resource, namespace, listOptions)),
  watchFrom: (resource, namespace, watchOptions) =>
    Stream.unwrap(
      Effect.as(inScope("watch", resource, namespace), primitives.watchFrom(resource, namespace, watchOptions))
    ),
  watch: (resource, namespace, watchOptions) =>
    Stream.unwrap(
      Effect.as(
        inScope("watch", resource, namespace),
        resumableWatch(primitives, resource, namespace, watchOptions, options)
      )
    )
})

/**
 * A cluster-scoped object lives in no namespace, so a read of one takes `""`. Any
 * other value is a caller's mistake that a client would otherwise drop silently (the
 * path has no namespace segment): it is refused before a request is sent.
 */
const inScope = (
  verb: string,
  resource: ResourceType<unknown>,
  namespace: string,
  name?: string
): Effect.Effect<void, BadRequest> =>
  resource.namespaced || namespace === ""
    ? Effect.void
    : Effect.fail(
      new BadRequest({
        reason: `cannot ${verb} ${qualifiedName(resource)}${
          name !== undefined ? ` "${name}"` : ""
        }: it is cluster-scoped, so its namespace must be "" (was "${namespace}")`
      })
    )

/** How the previous step ended, which decides whether the next one waits. */
type Outcome =
  | { readonly _tag: "Fresh" }
  | { readonly _tag: "Delivered" }
  | { readonly _tag: "Empty" }
  /** Closed by us: nothing came for a whole progress deadline. */
  | { readonly _tag: "Stalled" }
  | { readonly _tag: "Failed"; readonly error: KubeError }

const Fresh: Outcome = { _tag: "Fresh" }
const Delivered: Outcome = { _tag: "Delivered" }
const Empty: Outcome = { _tag: "Empty" }
const Stalled: Outcome = { _tag: "Stalled" }

interface State<A> {
  /** Where the next connection starts; undefined until a list or an event gave one. */
  readonly resourceVersion: string | undefined
  readonly needsList: boolean
  /**
   * Every object the consumer currently believes exists, by namespace/name. Updated
   * in place: copying it for each event made a watch of N objects cost O(N) per event.
   * It never leaves this watch, so nothing else sees it change.
   */
  readonly known: Map<string, A>
  readonly outcome: Outcome
  /** 410s in a row with no event in between. */
  readonly expiries: number
}

const resourceVersionOf = (object: KubeObject): string | undefined => object.metadata?.resourceVersion

/**
 * What a consumer must see to move from `known` to `listed`. A name that now holds a
 * different object (new uid) is a delete and an add, not a modification.
 */
export const diffAgainstList = <A extends KubeObject>(
  known: ReadonlyMap<string, A>,
  listed: ReadonlyArray<A>
): ReadonlyArray<WatchEvent<A>> => {
  const events: Array<WatchEvent<A>> = []
  const seen = new Set<string>()
  for (const object of listed) {
    const key = objectKey(object)
    seen.add(key)
    const previous = known.get(key)
    if (previous === undefined) {
      events.push({ type: "ADDED", object })
    } else if (
      previous.metadata?.uid !== undefined &&
      object.metadata?.uid !== undefined &&
      previous.metadata.uid !== object.metadata.uid
    ) {
      events.push({ type: "DELETED", object: previous }, { type: "ADDED", object })
    } else if (resourceVersionOf(previous) !== resourceVersionOf(object)) {
      events.push({ type: "MODIFIED", object })
    }
  }
  for (const [key, previous] of known) {
    if (!seen.has(key)) events.push({ type: "DELETED", object: previous })
  }
  return events
}

const applyEvent = <A extends KubeObject>(
  known: Map<string, A>,
  event: WatchEvent<A>,
  remember: (object: A) => A
): Map<string, A> => {
  if (event.type === "DELETED") known.delete(objectKey(event.object))
  else known.set(objectKey(event.object), remember(event.object))
  return known
}

// Marks the end of a connection whose server said 410 in-band: the upstream is
// stopped there and the next step relists.
const END = Symbol("END")

/** One watch as it runs: what it watches, how it keeps objects, its state and its reconnect backoff. */
interface WatchRun<A extends ReadableObject> {
  readonly primitives: KubeClientPrimitives
  readonly resource: ResourceType<A>
  readonly namespace: string
  readonly labelSelector: string | undefined
  readonly remember: (object: A) => A
  readonly state: Ref.Ref<State<A>>
  readonly driver: Schedule.ScheduleDriver<unknown, KubeError>
  readonly progressDeadlineMs: number
}

const setOutcome = <A extends ReadableObject>(run: WatchRun<A>, outcome: Outcome) =>
  Ref.update(run.state, (s) => ({ ...s, outcome }))

// A failure ends the connection: Expired relists, transient ones reconnect
// after a backoff, anything else is the consumer's to see.
const onFailure = <A extends ReadableObject>(run: WatchRun<A>, error: KubeError): Effect.Effect<void, KubeError> =>
  error._tag === "Expired"
    ? Ref.update(run.state, (s): State<A> => ({
      ...s,
      needsList: true,
      expiries: s.expiries + 1,
      // Expired again with nothing in between means a server that cannot serve
      // even a fresh list's version: back off rather than relist in a hot loop.
      outcome: s.expiries > 0 ? { _tag: "Failed", error } : Fresh
    }))
    : isTransient(error)
    ? setOutcome(run, { _tag: "Failed", error })
    : Effect.fail(error)

const backoff = <A extends ReadableObject>(run: WatchRun<A>, error: KubeError) =>
  run.driver.next(error).pipe(Effect.catchAll(() => Effect.fail(error)), Effect.asVoid)

// A server that answered is healthy again: the next failure starts the backoff over.
const delivered = <A extends ReadableObject>(run: WatchRun<A>) =>
  Ref.modify(run.state, (s) => [
    s.outcome._tag !== "Delivered",
    { ...s, outcome: Delivered, expiries: 0 }
  ]).pipe(
    Effect.flatMap((first) => (first ? run.driver.reset : Effect.void))
  )

const waitAfter = <A extends ReadableObject>(run: WatchRun<A>, outcome: Outcome): Effect.Effect<void, KubeError> => {
  switch (outcome._tag) {
    case "Fresh":
    case "Delivered":
    // The deadline itself was the wait, so this cannot loop hot; and it spends none of the
    // backoff's attempts, or a server that sends no bookmarks would fail a quiet watch.
    case "Stalled":
      return Effect.void
    case "Empty":
      // A real server sends bookmarks; one that keeps closing silently is
      // broken, and reconnecting in a hot loop would only hammer it.
      return backoff(
        run,
        new Transport({
          reason: `the API server keeps closing the watch on ${
            qualifiedName(run.resource)
          } in namespace "${run.namespace}" without sending anything`
        })
      )
    case "Failed":
      return backoff(run, outcome.error)
  }
}

/** How the previous connection or list ended, for the debug line of the next one. */
const endedAs = <A extends ReadableObject>(run: WatchRun<A>, outcome: Outcome): string => {
  switch (outcome._tag) {
    case "Fresh":
      return "after a list"
    case "Delivered":
      return "the last connection ended after delivering events"
    case "Empty":
      return "the last connection closed without sending anything"
    case "Stalled":
      return `the last connection sent neither an event nor a bookmark for ${deadlineInWords(run)}`
    case "Failed":
      return `the last one failed: ${outcome.error.reason}`
  }
}

/**
 * One debug line for a watch's list or connection: which watch, what it does, and why
 * again when it is not the first. The resourceVersion and selector are no secret.
 */
const logStep = <A extends ReadableObject>(run: WatchRun<A>, doing: string) =>
  whenDebug(() =>
    Effect.logDebug(
      `watch of ${qualifiedName(run.resource)}${run.namespace === "" ? "" : ` in namespace "${run.namespace}"`}${
        run.labelSelector === undefined ? "" : ` (${run.labelSelector})`
      }: ${doing}`
    ).pipe(Effect.annotateLogs({ watch: qualifiedName(run.resource), namespace: run.namespace }))
  )

/** Lists again and emits what changed since what the consumer last saw; the next connection starts from the list. */
const relist = <A extends ReadableObject>(run: WatchRun<A>): Effect.Effect<Stream.Stream<WatchEvent<A>>, KubeError> =>
  Effect.gen(function*() {
    const { labelSelector, remember, state } = run
    const listed = yield* run.primitives.list(
      run.resource,
      run.namespace,
      labelSelector !== undefined ? { labelSelector } : {}
    )
    const s = yield* Ref.get(state)
    const events = diffAgainstList(s.known, listed.items)
    const known = new Map<string, A>()
    for (const item of listed.items) known.set(objectKey(item), remember(item))
    yield* Ref.set(state, {
      resourceVersion: listed.metadata.resourceVersion ?? s.resourceVersion,
      needsList: false,
      known,
      outcome: Fresh,
      expiries: s.expiries
    })
    return Stream.fromIterable(events)
  }).pipe(
    Effect.catchAll((error) => onFailure(run, error).pipe(Effect.as(Stream.empty))),
    // A watch outlives the call that opened it (the shared one serves every session),
    // so its lists start traces of their own rather than hang under that call's span.
    Effect.mapInputContext((context: Context.Context<never>) => Context.omit(Tracer.ParentSpan)(context))
  )

/**
 * One chunk of a connection's events at once (a burst of changes arrives as one):
 * the state moves past every object event and bookmark in one update, and an
 * in-band error ends the connection after the events before it.
 */
const handle = <A extends ReadableObject>(
  run: WatchRun<A>,
  raws: Chunk.Chunk<RawWatchEvent<A>>
): Effect.Effect<Chunk.Chunk<WatchEvent<A> | typeof END>, KubeError> =>
  Effect.suspend(() => {
    const changes: Array<WatchEvent<A>> = []
    let failure: KubeError | undefined
    let resourceVersion: string | undefined
    let answered = false
    for (const raw of raws) {
      if (raw.type === "ERROR") {
        failure = raw.error
        break
      }
      answered = true
      if (raw.type === "BOOKMARK") {
        resourceVersion = raw.resourceVersion
      } else {
        resourceVersion = resourceVersionOf(raw.object) ?? resourceVersion
        changes.push({ type: raw.type, object: raw.object })
      }
    }
    const moved = answered
      ? Ref.update(run.state, (s) => {
        for (const change of changes) applyEvent(s.known, change, run.remember)
        return { ...s, resourceVersion: resourceVersion ?? s.resourceVersion }
      }).pipe(Effect.zipRight(delivered(run)))
      : Effect.void
    if (failure === undefined) return Effect.as(moved, Chunk.unsafeFromArray<WatchEvent<A> | typeof END>(changes))
    return moved.pipe(
      Effect.zipRight(onFailure(run, failure)),
      Effect.as(Chunk.unsafeFromArray<WatchEvent<A> | typeof END>([...changes, END]))
    )
  })

const deadlineInWords = <A extends ReadableObject>(run: WatchRun<A>): string =>
  Duration.format(Duration.millis(run.progressDeadlineMs))

/**
 * `raw` ended once it has kept its consumer waiting a whole progress deadline with
 * nothing (an event or a bookmark), the outcome noted as `Stalled`. Only time spent
 * waiting on the server counts: a consumer slow to take a burst is no silent server.
 * One watchdog fiber per connection, not a timer per chunk.
 */
const withProgressDeadline = <A extends ReadableObject>(
  run: WatchRun<A>,
  raw: Stream.Stream<RawWatchEvent<A>, KubeError>
): Stream.Stream<RawWatchEvent<A>, KubeError> =>
  Stream.unwrapScoped(
    Effect.gen(function*() {
      const clock = yield* Effect.clock
      const limit = run.progressDeadlineMs
      const pull = yield* Stream.toPull(raw)
      // When the consumer started waiting for the next chunk; undefined while it holds one.
      let waitingSince: number | undefined = clock.unsafeCurrentTimeMillis()
      const next = Effect.suspend(() => {
        waitingSince = clock.unsafeCurrentTimeMillis()
        return pull
      }).pipe(Effect.map((chunk) => {
        waitingSince = undefined
        return chunk
      }))
      const watchdog: Effect.Effect<void> = Effect.suspend(() => {
        const since = waitingSince
        if (since === undefined) return Effect.zipRight(Effect.sleep(Duration.millis(limit)), watchdog)
        const left = since + limit - clock.unsafeCurrentTimeMillis()
        if (left > 0) return Effect.zipRight(Effect.sleep(Duration.millis(left)), watchdog)
        return setOutcome(run, Stalled)
      })
      // The watchdog ending interrupts the pull under way: the connection closes cleanly.
      return Stream.repeatEffectChunkOption(next).pipe(Stream.interruptWhen(watchdog))
    })
  )

/** One connection from `resourceVersion`, its events until it ends or fails; a failure is noted for the next step. */
const connect = <A extends ReadableObject>(
  run: WatchRun<A>,
  resourceVersion: string
): Stream.Stream<WatchEvent<A>, KubeError> =>
  Stream.unwrap(
    setOutcome(run, Empty).pipe(
      Effect.as(
        withProgressDeadline(
          run,
          run.primitives.watchFrom(run.resource, run.namespace, {
            resourceVersion,
            ...(run.labelSelector !== undefined ? { labelSelector: run.labelSelector } : {})
          })
        ).pipe(
          Stream.mapChunksEffect((raws) => handle(run, raws)),
          Stream.takeWhile((x): x is WatchEvent<A> => x !== END),
          Stream.catchAll((error) => Stream.execute(onFailure(run, error)))
        )
      )
    )
  )

const resumableWatch = <A extends ReadableObject>(
  primitives: KubeClientPrimitives,
  resource: ResourceType<A>,
  namespace: string,
  watchOptions: WatchOptions<A> | undefined,
  options: ResumableWatchOptions | undefined
): Stream.Stream<WatchEvent<A>, KubeError> =>
  Stream.unwrap(
    Effect.gen(function*() {
      const driver = yield* Schedule.driver(options?.reconnectSchedule ?? watchReconnectSchedule)
      const remember = watchOptions?.remember ?? ((object: A) => object)
      // "0" asks the server for synthetic ADDED events, i.e. a list; doing the list
      // ourselves means a reconnect before the first event cannot repeat them.
      const start = watchOptions?.resourceVersion
      const fromList = start === undefined || start === "" || start === "0"
      const run: WatchRun<A> = {
        primitives,
        resource,
        namespace,
        labelSelector: watchOptions?.labelSelector,
        remember,
        state: yield* Ref.make<State<A>>({
          resourceVersion: fromList ? undefined : start,
          needsList: fromList,
          // Kept when the watch starts from a list too: that list then reports the
          // difference against them, deletions included, as a relist after 410 does
          // (client-go's Replace). A caller that starts a broken watch again from what
          // it had seen thus learns what was deleted while it was down.
          known: new Map((watchOptions?.known ?? []).map((object) => [objectKey(object), remember(object)])),
          outcome: Fresh,
          expiries: 0
        }),
        driver,
        progressDeadlineMs: Math.max(1, Duration.toMillis(options?.progressDeadline ?? WATCH_PROGRESS_DEADLINE))
      }

      // A connection after the first is a restart, and a list after the first (or any
      // list of a watch that started from a resourceVersion) a relist: both cost the
      // API server, so a watch that keeps doing either shows in the metrics.
      const counted = (metric: Metric.Metric.Counter<number>) =>
        Metric.tagged(metric, "resource", qualifiedName(resource))
      let lists = fromList ? 0 : 1
      let connections = 0

      // One step per connection (or list); flattening a repeated effect keeps a
      // watch that reconnects for days at constant depth.
      const step: Effect.Effect<Stream.Stream<WatchEvent<A>, KubeError>, Option.Option<KubeError>> = Effect.gen(
        function*() {
          const before = yield* Ref.get(run.state)
          yield* waitAfter(run, before.outcome)
          const s = yield* Ref.get(run.state)
          if (s.needsList || s.resourceVersion === undefined) {
            const again = lists++ > 0
            if (again) yield* Metric.increment(counted(watchRelists))
            yield* logStep(
              run,
              !again
                ? "listing"
                // Only a 410 asks for a list again; a list that failed is tried again after its backoff.
                : `listing again (${
                  before.outcome._tag === "Failed" ? endedAs(run, before.outcome) : "its resourceVersion expired"
                })`
            )
            return yield* relist(run)
          }
          const again = connections++ > 0
          if (again) yield* Metric.increment(counted(watchRestarts))
          yield* logStep(
            run,
            `${again ? "reconnecting" : "connecting"} from resourceVersion ${s.resourceVersion}${
              again ? ` (${endedAs(run, before.outcome)})` : ""
            }`
          )
          return connect(run, s.resourceVersion)
        }
      ).pipe(Effect.mapError(Option.some))

      return Stream.repeatEffectOption(step).pipe(Stream.flatten())
    })
  )
