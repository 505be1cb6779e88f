/**
 * How `check` prints its report: one line per check with ✓, ✗ or ! in front and, under
 * a failure or a warning, what to do; or the whole report as one JSON object.
 */
import type { CheckReport, CheckResult } from "../../runner/Check.js"
import { ANSI, paint } from "./SessionView.js"

const MARKS = { ok: ["✓", ANSI.green], fail: ["✗", ANSI.red], warn: ["!", ANSI.yellow] } as const

/** The lines of one check: its mark and line, then its hint indented. */
const checkLines = (check: CheckResult, color: boolean): ReadonlyArray<string> => {
  const [mark, code] = MARKS[check.status]
  return [`${paint({ color }, code, mark)} ${check.line}`, ...(check.hint !== undefined ? [`    ${check.hint}`] : [])]
}

/** The report for a person: every check, then a summary line. */
export const reportLines = (report: CheckReport, color: boolean): ReadonlyArray<string> => {
  const failed = report.checks.filter((c) => c.status === "fail").length
  const warned = report.checks.filter((c) => c.status === "warn").length
  const summary = failed > 0
    ? `${failed} of ${report.checks.length} checks failed${warned > 0 ? `, ${warned} could not tell` : ""}`
    : `all ${report.checks.length - warned} checks passed${warned > 0 ? `, ${warned} could not tell` : ""}`
  return [...report.checks.flatMap((check) => checkLines(check, color)), "", summary]
}

/** The report as one JSON document (`-o json`). */
export const reportJson = (report: CheckReport): string => JSON.stringify(report)
