/**
 * Debug lines of the live client (requests, watch connections) that cost nothing when
 * debug logging is off: the fiber's minimum log level is read before a line is built,
 * so a call at the default level builds no string and runs no extra step.
 */
import { Effect, type Fiber, FiberRef, LogLevel } from "effect"

/** Whether `fiber` would log a line at debug level. */
export const logsDebug = (fiber: Fiber.RuntimeFiber<unknown, unknown>): boolean =>
  LogLevel.greaterThanEqual(LogLevel.Debug, fiber.getFiberRef(FiberRef.currentMinimumLogLevel))

/** `line()` run only when the current fiber logs at debug level; the line is not built otherwise. */
export const whenDebug = (line: () => Effect.Effect<void>): Effect.Effect<void> =>
  Effect.withFiberRuntime((fiber) => (logsDebug(fiber) ? line() : Effect.void))
