/**
 * The route-health part of `npm run bench`: the shared watch and polling side by
 * side at 500 sessions x 3 ports in both routing modes, and the watch alone at
 * 1,000 x 3, each against LocalCluster in its own process; then, at 500 x 3, the
 * shared watch with one session followed, which is what the watch costs by itself,
 * and a bare node:http watch of the same objects, the floor under any transport.
 * Prints one table and checks the targets; the Effect succeeds with whether every
 * one was met.
 */
import { Effect } from "effect"
import { type Measured, runScenario, type Scenario } from "./health.js"
import { shownMs } from "./processStats.js"

const SCENARIOS: ReadonlyArray<Scenario> = [
  { mode: "ingress", source: "poll", sessions: 500, ports: 3 },
  { mode: "ingress", source: "watch", sessions: 500, ports: 3 },
  { mode: "gateway", source: "poll", sessions: 500, ports: 3 },
  { mode: "gateway", source: "watch", sessions: 500, ports: 3 },
  { mode: "ingress", source: "watch", sessions: 1_000, ports: 3 },
  // The shared watch by itself: what the CPU target would leave to route health.
  { mode: "ingress", source: "watch", sessions: 500, ports: 3, followed: 1 },
  { mode: "gateway", source: "watch", sessions: 500, ports: 3, followed: 1 },
  // And under it, the floor of any watch transport here: node:http and JSON.parse alone.
  { mode: "ingress", source: "bare", sessions: 500, ports: 3 },
  { mode: "gateway", source: "bare", sessions: 500, ports: 3 }
]

/** Requests by verb as one line, `get 3, list 2`. */
export const verbs = (requests: Readonly<Record<string, number>>) =>
  Object.entries(requests).map(([verb, n]) => `${verb} ${n}`).join(", ") || "none counted"

const SOURCE_WIDTH = 17

// A run that follows only some sessions, or none (the bare watch), says nothing of the
// last verdict or the heap of all of them: those columns are left blank.
const row = (m: Measured) => {
  const all = m.scenario.followed === undefined && m.scenario.source !== "bare"
  const source = m.scenario.source === "bare"
    ? "bare node:http"
    : m.scenario.followed === undefined
    ? m.scenario.source
    : `${m.scenario.source}, ${m.scenario.followed} followed`
  return [
    `${m.scenario.mode} ${m.scenario.sessions}x${m.scenario.ports}`.padEnd(16),
    source.padEnd(SOURCE_WIDTH),
    String(m.requestsTotal).padStart(6),
    `${shownMs(m.lag.p50)}/${shownMs(m.lag.p99)}/${shownMs(m.lag.max)}`.padStart(16),
    (all ? shownMs(m.lastWriteToLastVerdictMs) : "-").padStart(8),
    m.cpuPerRouteMs.toFixed(2).padStart(8),
    (all ? `${m.heapPerRouteKiB.net.toFixed(1)}/${m.heapPerRouteKiB.gross.toFixed(1)}` : "-").padStart(10),
    `  ${verbs(m.requests)}`
  ].join(" ")
}

/** A target checked, or a measurement printed beside the targets. */
export interface Check {
  readonly name: string
  /** Undefined for a measurement printed beside the targets, not one of them. */
  readonly ok: boolean | undefined
  readonly said: string
}

const checks = (all: ReadonlyArray<Measured>): ReadonlyArray<Check> => {
  const find = (mode: Scenario["mode"], source: Scenario["source"], sessions: number) =>
    all.find((m) =>
      m.scenario.mode === mode && m.scenario.source === source && m.scenario.sessions === sessions &&
      m.scenario.followed === undefined
    )!
  const out: Array<Check> = []
  for (const mode of ["ingress", "gateway"] as const) {
    const poll = find(mode, "poll", 500)
    const watch = find(mode, "watch", 500)
    const fewer = watch.requestsTotal === 0 ? Number.NaN : poll.requestsTotal / watch.requestsTotal
    out.push({
      name: `${mode}: watch makes >= 100x fewer API requests than poll while settling`,
      ok: fewer >= 100,
      said: Number.isNaN(fewer) ? "no requests counted (the cluster serves no /metrics?)" : `${fewer.toFixed(0)}x`
    })
    out.push({
      name: `${mode}: watch verdict lag p99 <= 50 ms`,
      ok: watch.lag.p99 <= 50,
      said: `${shownMs(watch.lag.p99)} ms`
    })
    out.push({
      name: `${mode}: watch runner CPU per route, every session followed, against poll's`,
      ok: undefined,
      said: `${watch.cpuPerRouteMs.toFixed(2)} vs ${poll.cpuPerRouteMs.toFixed(2)} ms (1/${
        (poll.cpuPerRouteMs / watch.cpuPerRouteMs).toFixed(1)
      }); of the watch's, ${
        watch.mainThreadCpuPerRouteMs === undefined
          ? "the main thread's share is not known here"
          : `${watch.mainThreadCpuPerRouteMs.toFixed(2)} ms on the main thread, the rest on V8's helper threads`
      }; forking the runner's fiber per session alone costs ${watch.fiberCpuPerRouteMs.toFixed(3)} ms per route`
    })
    const alone = all.find((m) =>
      m.scenario.mode === mode && m.scenario.source === "watch" && m.scenario.followed !== undefined
    )
    const bare = all.find((m) => m.scenario.mode === mode && m.scenario.source === "bare")
    if (alone !== undefined && bare !== undefined) {
      // The CPU target is judged against the floor any watch transport has on this runtime.
      out.push({
        name: `${mode}: the shared watch by itself (every object listed, cached and its status write delivered; ${
          alone.scenario.followed === 1 ? "one session" : `${alone.scenario.followed} sessions`
        } followed) within 2x of the bare node:http watch's CPU per route`,
        ok: alone.cpuPerRouteMs <= 2 * bare.cpuPerRouteMs,
        said: `${alone.cpuPerRouteMs.toFixed(2)} vs ${bare.cpuPerRouteMs.toFixed(2)} ms per route (${
          (alone.cpuPerRouteMs / bare.cpuPerRouteMs).toFixed(2)
        }x)${
          alone.mainThreadCpuPerRouteMs === undefined
            ? ""
            : `; ${alone.mainThreadCpuPerRouteMs.toFixed(2)} ms on the main thread`
        }`
      })
    }
    if (bare !== undefined) {
      out.push({
        name:
          `${mode}: a bare node:http list and watch of the same objects (JSON.parse and a Map; no Effect, no route health)`,
        ok: undefined,
        said: `${bare.cpuPerRouteMs.toFixed(2)} ms per route, 1/${
          (poll.cpuPerRouteMs / bare.cpuPerRouteMs).toFixed(1)
        } of poll's: the floor under any watch transport on this runtime`
      })
    }
    const heap = watch.heapPerRouteKiB
    out.push({
      name: `${mode}: <= 4 KiB heap per watched route, beyond the runner's own fiber per session`,
      ok: heap.net <= 4,
      said: `${heap.net.toFixed(1)} KiB (${heap.gross.toFixed(1)} KiB with the fiber, which alone costs ${
        heap.fiberPerSessionKiB.toFixed(1)
      } KiB per session)`
    })
  }
  const big = find("ingress", "watch", 1_000)
  out.push({
    name: "3,000 routes: the last verdict within 2 s of the last status write",
    ok: big.lastWriteToLastVerdictMs <= 2_000,
    said: `${shownMs(big.lastWriteToLastVerdictMs)} ms`
  })
  out.push({
    name: "every host ends programmed",
    ok: all.every((m) => m.notProgrammed === 0),
    said: all.map((m) => m.notProgrammed).join("/")
  })
  return out
}

/** Prints each check as `ok`, `MISS` or `info`; true when none was missed. */
export const printChecks = (checks: ReadonlyArray<Check>): boolean => {
  let met = true
  for (const check of checks) {
    met &&= check.ok !== false
    console.log(`${check.ok === undefined ? "info" : check.ok ? "ok  " : "MISS"} ${check.name}: ${check.said}`)
  }
  return met
}

/** Runs every scenario in turn, prints the table and the targets. */
export const routeHealth: Effect.Effect<boolean> = Effect.gen(function*() {
  console.log("\nroute health: status written 1 s after every host is watched; LocalCluster in its own process, HTTP")
  console.log(
    `${"scenario".padEnd(16)} ${"source".padEnd(SOURCE_WIDTH)} ${"reqs".padStart(6)} ${
      "lag p50/p99/max".padStart(16)
    } ${"last ms".padStart(8)} ${"cpu/rt".padStart(8)} ${"KiB/rt".padStart(10)}   requests by verb while settling`
  )
  const all: Array<Measured> = []
  for (const scenario of SCENARIOS) {
    const measured = yield* runScenario(scenario)
    all.push(measured)
    console.log(row(measured))
  }
  return printChecks(checks(all))
})
