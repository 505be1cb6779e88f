/**
 * The API server process as its clients see it: running, paused (SIGSTOP: its TCP
 * connections stay up and nothing answers until SIGCONT) or stopped (listener and
 * connections gone until it restarts over the same etcd). Both faces of LocalCluster
 * consult it through the cluster's `Faults`, so they fail alike.
 */
import { Data, Effect, Option, Ref, type Scope, Stream, SubscriptionRef } from "effect"

/** What the process is doing. */
export type ServerState = "running" | "paused" | "stopped"

/** The server could not listen again (e.g. something else took its port while it was down). */
export class RestartError extends Data.TaggedError("RestartError")<{
  readonly reason: string
  readonly cause?: unknown
}> {
  override get message(): string {
    return this.reason
  }
}

/** What a face with a listener does when the process dies and comes back. */
export interface ServerHooks {
  /** Close the listener and every connection; completes once they are gone. */
  readonly stop: Effect.Effect<void>
  /** Listen again where it listened before. */
  readonly restart: Effect.Effect<void, RestartError>
}

/** Control of the simulated API server process, and the gate its faces pass requests through. */
export interface ServerLifecycle {
  readonly state: Effect.Effect<ServerState>
  /** The state now, then each change: tests wait on it instead of sleeping. */
  readonly changes: Stream.Stream<ServerState>
  /**
   * SIGSTOP: requests (discovery and watches included) get no answer and open watches
   * send nothing, while connections stay open. No effect on a stopped server.
   */
  readonly pause: Effect.Effect<void>
  /**
   * SIGCONT: requests that waited are answered, and open watches carry on from where
   * they were, delivering every change made meanwhile. No effect unless paused.
   */
  readonly resume: Effect.Effect<void>
  /**
   * The process dies: new connections are refused, open ones (watches included) are
   * reset, requests in flight get no answer. The store is kept, as etcd keeps it.
   */
  readonly stop: Effect.Effect<void>
  /**
   * A new process on the same port and store: objects and resourceVersions are as they
   * were, so an old kubeconfig and a watch resumed from a known version both work.
   * A server that is not stopped is stopped first.
   */
  readonly restart: Effect.Effect<void, RestartError>
  /**
   * How many requests and watch events a pause holds back now. Tests wait on it
   * (`awaitHeld`) to know the server has a request before they resume it.
   */
  readonly held: Effect.Effect<number>
  /** Waits until a pause holds at least `count` requests or watch events. */
  readonly awaitHeld: (count: number) => Effect.Effect<void>
  /** The state now, without a fiber step: for the hot path of every request. */
  readonly unsafeState: () => ServerState
  /** For the faces: waits while paused, then says whether the server is there to answer. */
  readonly awaitAnswering: Effect.Effect<"running" | "stopped">
  /** For clients inside the cluster (the simulated controllers): waits until it runs, paused or stopped. */
  readonly awaitRunning: Effect.Effect<void>
  /** For faces with a listener: run `hooks` on stop and restart for the life of the scope. */
  readonly attach: (hooks: ServerHooks) => Effect.Effect<void, never, Scope.Scope>
}

/** A running server; `onStop` runs when it dies, after the state says so (it cuts open watches). */
export const makeServerLifecycle = (onStop: Effect.Effect<void>): Effect.Effect<ServerLifecycle> =>
  Effect.gen(function*() {
    const state = yield* SubscriptionRef.make<ServerState>("running")
    const held = yield* SubscriptionRef.make(0)
    const hooks = yield* Ref.make<ReadonlyArray<ServerHooks>>([])
    // Transitions one at a time: a restart racing a stop must not leave a listener behind.
    const lock = yield* Effect.makeSemaphore(1)

    /**
     * The state as a plain value too, set in the same step as the ref: every request
     * and every controller call asks whether the server runs, and a ref read costs
     * several fiber steps where this costs none.
     */
    let current: ServerState = "running"
    const setState = (next: (s: ServerState) => ServerState) =>
      SubscriptionRef.update(state, (s) => (current = next(s)))

    const transition = (from: ServerState, to: ServerState) => setState((s) => (s === from ? to : s))

    const stopNow = Effect.gen(function*() {
      if ((yield* SubscriptionRef.get(state)) === "stopped") return
      // The state first: requests waiting out a pause wake up to a dead server, not a live one.
      yield* setState(() => "stopped")
      yield* onStop
      yield* Effect.forEach(yield* Ref.get(hooks), (h) => h.stop, { discard: true })
    })

    const restart = Effect.gen(function*() {
      yield* stopNow
      yield* Effect.forEach(yield* Ref.get(hooks), (h) => h.restart, { discard: true })
      yield* setState(() => "running")
    })

    const running = Effect.succeed("running" as const)
    const awaitAnswering = Effect.suspend(() =>
      current === "running" ? running : Effect.flatMap(SubscriptionRef.get(state), (now) =>
        now !== "paused"
          ? Effect.succeed(now)
          : Effect.acquireUseRelease(
            SubscriptionRef.update(held, (n) => n + 1),
            () =>
              state.changes.pipe(
                Stream.filter((s): s is "running" | "stopped" => s !== "paused"),
                Stream.runHead,
                Effect.map(Option.getOrElse((): "running" | "stopped" => "stopped"))
              ),
            () => SubscriptionRef.update(held, (n) => n - 1)
          ))
    )

    const awaitRunning = Effect.suspend(() =>
      current === "running"
        ? Effect.void
        : Effect.asVoid(Stream.runHead(Stream.filter(state.changes, (s) => s === "running")))
    )

    return {
      state: SubscriptionRef.get(state),
      held: SubscriptionRef.get(held),
      awaitHeld: (count) => Effect.asVoid(Stream.runHead(Stream.filter(held.changes, (n) => n >= count))),
      changes: state.changes,
      pause: lock.withPermits(1)(transition("running", "paused")),
      resume: lock.withPermits(1)(transition("paused", "running")),
      stop: lock.withPermits(1)(stopNow),
      restart: lock.withPermits(1)(restart),
      unsafeState: () => current,
      awaitAnswering: awaitAnswering as Effect.Effect<"running" | "stopped">,
      awaitRunning,
      attach: (h) =>
        Effect.acquireRelease(
          Ref.update(hooks, (all) => [...all, h]),
          () => Ref.update(hooks, (all) => all.filter((x) => x !== h))
        )
    }
  })
