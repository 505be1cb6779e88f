/**
 * The one way a check of `checkRouting` states its outcome, shared by `Check.ts` and
 * the checks kept beside it here.
 */
import type { CheckResult, CheckStatus } from "../Check.js"

/** One check's result; `hint` only when there is something to do. */
export const result = (id: string, status: CheckStatus, line: string, hint?: string): CheckResult => ({
  id,
  status,
  line,
  ...(hint !== undefined ? { hint } : {})
})
