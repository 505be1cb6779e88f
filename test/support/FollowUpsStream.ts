/**
 * The follow-ups of a stream of events, as publishSession feeds them from route health:
 * each event goes out, then `makeFollowUps` reacts to it. Lets the follow-up tests drive
 * them with scripted events.
 */
import { Effect, Mailbox, Stream } from "effect"
import {
  type FollowedEvent,
  type FollowedSession,
  type FollowUpEvent,
  makeFollowUps
} from "../../src/runner/RouteFollowUps.js"
import type { EventRecorder } from "../../src/services/EventRecorder.js"
import type { RouteProbe } from "../../src/services/RouteProbe.js"
import type { RouterConfig } from "../../src/services/RouterConfig.js"

/**
 * `events` with their follow-ups merged in (see `makeFollowUps`); untouched when there
 * are none to make. The stream ends once `events` has and every probe is done.
 */
export const withFollowUps = (session: FollowedSession) =>
<E extends FollowedEvent | FollowUpEvent, Err, R>(
  events: Stream.Stream<E, Err, R>
): Stream.Stream<E | FollowUpEvent, Err, R | EventRecorder | RouteProbe | RouterConfig> =>
  Stream.unwrapScoped(Effect.gen(function*() {
    const out = yield* Mailbox.make<E | FollowUpEvent, Err>()
    const followUps = yield* makeFollowUps(session, (event) => out.offer(event))
    if (followUps === undefined) return events
    yield* events.pipe(
      Stream.runForEach((event) => Effect.zipRight(out.offer(event), followUps.onEvent(event))),
      Effect.zipRight(followUps.done),
      Effect.exit,
      Effect.flatMap((exit) => out.done(exit)),
      Effect.forkScoped
    )
    return Mailbox.toStream(out)
  }))
