// Loaded with `node --import` by tests that check what a process loads: registers
// hooks that append every module URL the process resolves to $MODULE_LOG.
import { register } from "node:module"

register("./hooks.mjs", import.meta.url)
