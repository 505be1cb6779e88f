/** Why the real control plane could not be built, started or kept running: one line a person can act on. */
import { Data } from "effect"

export class ControlPlaneError extends Data.TaggedError("ControlPlaneError")<{ readonly message: string }> {}
