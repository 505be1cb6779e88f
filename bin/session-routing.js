#!/usr/bin/env node
// The `session-routing` executable. The package ships TypeScript sources without a
// build step, so this registers tsx's ESM loader in-process (no child process, so
// signals and the exit status are the CLI's own) and then loads the real entry.
import { register } from "tsx/esm/api"

register()
await import("../src/cli/main.ts")
