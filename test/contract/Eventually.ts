/**
 * Waiting on a controller in a contract test: kube-controller-manager's garbage
 * collector and EndpointSlice controller act within seconds of a change, not with it,
 * so a test asks again until the answer says what it waits for, and fails with the
 * last answer when it never does.
 */
import { Duration, Effect } from "effect"
import type { Answer } from "./RawApi.js"

/** How long to wait before asking again. */
const INTERVAL = Duration.millis(250)

/** Asks again until `done` holds of the answer, for at most `within`, and gives that answer. */
export const eventually = (
  what: string,
  ask: Effect.Effect<Answer>,
  done: (answer: Answer) => boolean,
  within: Duration.DurationInput = "40 seconds"
): Effect.Effect<Answer> =>
  Effect.suspend(() => {
    let last: Answer | undefined
    const poll: Effect.Effect<Answer> = Effect.flatMap(ask, (answer) => {
      last = answer
      return done(answer) ? Effect.succeed(answer) : Effect.zipRight(Effect.sleep(INTERVAL), poll)
    })
    return poll.pipe(
      Effect.timeoutFail({
        duration: within,
        onTimeout: () =>
          new Error(
            `${what}: not within ${Duration.format(within)}; the last answer was ${last?.status} ${
              last?.text.slice(0, 4000)
            }`
          )
      }),
      Effect.orDie
    )
  })
