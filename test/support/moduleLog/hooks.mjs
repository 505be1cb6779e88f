// Module hooks (run off the main thread): every resolved URL goes to $MODULE_LOG, one per line.
import { appendFileSync } from "node:fs"

const log = process.env.MODULE_LOG

export async function resolve(specifier, context, nextResolve) {
  const resolved = await nextResolve(specifier, context)
  if (log !== undefined) appendFileSync(log, `${resolved.url}\n`)
  return resolved
}
