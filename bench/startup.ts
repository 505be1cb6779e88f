/**
 * How fast the executable starts, as a person at a shell meets it: `--version`, `--help`,
 * `render` and `status` (against LocalCluster in a process of its own) through
 * `bin/session-routing.js`, beside `node -e 0` (the runtime's own floor), the
 * smallest @effect/cli program bundled the same way (bench/startupFloor.ts: the floor
 * of any command on this stack) and, where one is found, `kubectl version --client`. Each command runs in rounds, every command
 * once per round, so that a change in the machine's load falls on all of them alike;
 * the table gives medians and ratios to `node -e 0` from the one sitting, and the peak
 * RSS of each (through GNU time, where /usr/bin/time is GNU's).
 */
import { Effect } from "effect"
import type { BuildOptions } from "esbuild"
import { build } from "esbuild"
import { execFile, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import { RouterConfigLive } from "session-routing"
import { clusterProcess } from "./health.js"
import { percentile } from "./processStats.js"

const ROUNDS = 7
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")
const bin = path.join(root, "bin", "session-routing.js")
const BUNDLED_KUBECTL = path.join(root, "node_modules", ".cache", "session-routing", "kubectl-1.35.2", "kubectl")

/**
 * Targets: ≤ 4× `node -e 0` for `render`, ≤ 2× for `--version` and `--help` (the executable
 * answers them without loading the bundle), ≤ 100 MiB peak.
 */
const MAX_RATIO = 4
const MAX_RATIO_ANSWERED = 2
const MAX_RSS_MIB = 100

interface Startup {
  readonly name: string
  readonly command: string
  readonly args: ReadonlyArray<string>
  readonly env?: NodeJS.ProcessEnv
  /** Judged against the targets. */
  readonly judged: boolean
  /** Its own bound on the ratio to `node -e 0`, when not MAX_RATIO. */
  readonly maxRatio?: number
  /** The exit status a run ends with; default 0. */
  readonly exitCode?: number
}

/** Wall time of one run, ms; fails when the command ends otherwise than it should. */
const timed = (startup: Startup) =>
  Effect.async<number, string>((resume) => {
    const started = process.hrtime.bigint()
    const child = spawn(startup.command, [...startup.args], {
      env: { PATH: process.env.PATH ?? "", HOME: os.homedir(), ...startup.env },
      stdio: ["ignore", "ignore", "pipe"]
    })
    let stderr = ""
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")))
    child.on("exit", (code) => {
      const ms = Number(process.hrtime.bigint() - started) / 1e6
      resume(
        code === (startup.exitCode ?? 0)
          ? Effect.succeed(ms)
          : Effect.fail(`${startup.name} exited ${code}: ${stderr.trim()}`)
      )
    })
    return Effect.sync(() => child.kill())
  })

const gnuTime = fs.existsSync("/usr/bin/time") ? "/usr/bin/time" : undefined

/** Peak RSS of one run, MiB, through GNU time; undefined without it. */
const peakRss = (startup: Startup) =>
  gnuTime === undefined ? Effect.succeed(undefined) : Effect.async<number | undefined>((resume) => {
    const child = execFile(gnuTime, ["-f", "%M", startup.command, ...startup.args], {
      env: { PATH: process.env.PATH ?? "", HOME: os.homedir(), ...startup.env }
    }, (_error, _stdout, stderr) => {
      const kib = Number(stderr.trim().split("\n").at(-1))
      resume(Effect.succeed(Number.isFinite(kib) ? kib / 1024 : undefined))
    })
    return Effect.sync(() => child.kill())
  })

const kubectlPath = (): string | undefined => {
  if (fs.existsSync(BUNDLED_KUBECTL)) return BUNDLED_KUBECTL
  const found = (process.env.PATH ?? "").split(path.delimiter).map((dir) => path.join(dir, "kubectl"))
  return found.find((file) => fs.existsSync(file))
}

export const startup: Effect.Effect<boolean, unknown> = Effect.scoped(
  Effect.gen(function*() {
    const cluster = yield* clusterProcess(new Map(), { controllers: "at-once" })
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "session-routing-startup-"))
    yield* Effect.addFinalizer(() => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true })))
    const kubeconfig = path.join(dir, "kubeconfig")
    fs.writeFileSync(kubeconfig, cluster.info.kubeconfig, { mode: 0o600 })
    const ENV = RouterConfigLive.ENV
    const routing = {
      KUBECONFIG: kubeconfig,
      [ENV.baseDomain]: cluster.info.baseDomain,
      [ENV.sessionNamespace]: cluster.info.namespace,
      [ENV.ingressClassName]: cluster.info.ingressClassName
    }
    const kubectl = kubectlPath()
    // The esbuild config is plain JavaScript, outside what TypeScript resolves.
    const { bundleOptions } = (yield* Effect.promise(() =>
      import(pathToFileURL(path.join(root, "esbuild.config.mjs")).href)
    )) as { readonly bundleOptions: BuildOptions }
    yield* Effect.promise(() =>
      build({ ...bundleOptions, entryPoints: { floor: path.join(root, "bench", "startupFloor.ts") }, outdir: dir })
    )
    const startups: ReadonlyArray<Startup> = [
      { name: "node -e 0", command: process.execPath, args: ["-e", "0"], judged: false },
      {
        name: "@effect/cli floor --version",
        command: process.execPath,
        args: [path.join(dir, "floor.js"), "--version"],
        judged: false
      },
      {
        name: "session-routing --version",
        command: process.execPath,
        args: [bin, "--version"],
        judged: true,
        maxRatio: MAX_RATIO_ANSWERED
      },
      {
        name: "session-routing --help",
        command: process.execPath,
        args: [bin, "--help"],
        judged: true,
        maxRatio: MAX_RATIO_ANSWERED
      },
      {
        name: "session-routing render",
        command: process.execPath,
        args: [
          bin,
          "render",
          "--session",
          "abc",
          "--port",
          "8080",
          "--pod-uid",
          "00000000-0000-4000-8000-000000000001"
        ],
        env: routing,
        judged: true
      },
      {
        name: "session-routing status",
        command: process.execPath,
        args: [bin, "status", "--session", "abc"],
        env: routing,
        judged: false,
        // A session with no objects: one list per kind, then exit 1 saying so.
        exitCode: 1
      },
      ...(kubectl === undefined ? [] : [{
        name: "kubectl version --client",
        command: kubectl,
        args: ["version", "--client"],
        judged: false
      }])
    ]
    const times = new Map(startups.map((s) => [s.name, [] as Array<number>]))
    // One warm-up round: the first run pays for the file cache.
    for (const s of startups) {
      yield* timed(s)
    }
    for (let round = 0; round < ROUNDS; round++) {
      for (const s of startups) {
        times.get(s.name)!.push(yield* timed(s))
      }
    }
    const rss = new Map<string, number | undefined>()
    for (const s of startups) {
      rss.set(s.name, yield* peakRss(s))
    }

    const median = (name: string) =>
      percentile([...times.get(name)!].sort((a, b) => a - b), 0.5)
    const floor = median("node -e 0")
    console.log(
      `\nstartup: median of ${ROUNDS} rounds (every command once a round), wall time from spawn to exit; peak RSS of one run`
    )
    console.log(`${"command".padEnd(28)}${"median".padStart(10)}${"x node".padStart(9)}${"peak RSS".padStart(11)}`)
    let ok = true
    const verdicts: Array<string> = []
    for (const s of startups) {
      const ms = median(s.name)
      const mib = rss.get(s.name)
      console.log(
        `${s.name.padEnd(28)}${`${ms.toFixed(0)} ms`.padStart(10)}${(ms / floor).toFixed(1).padStart(8)}x${
          (mib === undefined ? "n/a" : `${mib.toFixed(0)} MiB`).padStart(11)
        }`
      )
      if (!s.judged) continue
      const maxRatio = s.maxRatio ?? MAX_RATIO
      const fast = ms / floor <= maxRatio
      const small = mib === undefined || mib <= MAX_RSS_MIB
      ok = ok && fast && small
      verdicts.push(`${fast ? "ok  " : "MISS"} ${s.name}: <= ${maxRatio}x node -e 0: ${(ms / floor).toFixed(1)}x`)
      verdicts.push(
        `${small ? "ok  " : "MISS"} ${s.name}: peak RSS <= ${MAX_RSS_MIB} MiB: ${
          mib === undefined ? "not measured (no GNU time)" : `${mib.toFixed(0)} MiB`
        }`
      )
    }
    for (const line of verdicts) console.log(line)
    return ok
  })
)
