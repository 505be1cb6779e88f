/**
 * The real control plane in a process of its own, for the cluster tests' global setup and
 * the bench: runs main.ts (what `npm run cluster:real` runs), waits for `ready`, and reads
 * the `key: value` lines it printed. It is started with `--until-stdin-closes`, so it stops
 * with whoever started it, even one that dies without stopping it.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { fileURLToPath } from "node:url"

const MAIN = fileURLToPath(new URL("main.ts", import.meta.url))
const ROOT = fileURLToPath(new URL("../..", import.meta.url))

/** What main.ts prints before `ready`, by key. */
export interface ControlPlaneInfo {
  readonly server: string
  readonly "data-plane": string
  readonly kubeconfig: string
  readonly namespace: string
  readonly "base-domain": string
  readonly "ingress-class": string
  readonly gateway: string
  readonly "gateway-class": string
  readonly "gateway-controller": string
  readonly "node-address": string
  readonly kubernetes: string
  readonly logs: string
  readonly control?: string
  readonly environment: string
}

export interface ControlPlaneProcess {
  readonly info: ControlPlaneInfo
  readonly child: ChildProcess
  /** Everything it said on stderr so far. */
  readonly stderr: () => string
  /** SIGTERM, and the wait for every component to be stopped (SIGKILL after `within` ms). */
  readonly stop: (within?: number) => Promise<void>
}

/** The `key: value` lines before `ready`; undefined until `ready` is there. */
export const parseControlPlaneInfo = (stdout: string): ControlPlaneInfo | undefined => {
  const lines = stdout.split("\n")
  const ready = lines.indexOf("ready")
  if (ready < 0) return undefined
  const entries = lines.slice(0, ready).map((line) => {
    const colon = line.indexOf(": ")
    return [line.slice(0, colon), line.slice(colon + 2)] as const
  })
  return Object.fromEntries(entries) as unknown as ControlPlaneInfo
}

/**
 * Starts main.ts with `args` and resolves once it printed `ready`; rejects with its stderr
 * if it exits first or is not ready within `startWithin` ms (a first build takes minutes).
 */
export const startControlPlaneProcess = (
  args: ReadonlyArray<string>,
  options: { readonly startWithin: number; readonly onStderr?: (chunk: string) => void }
): Promise<ControlPlaneProcess> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", MAIN, "--until-stdin-closes", ...args], {
      cwd: ROOT,
      stdio: ["pipe", "pipe", "pipe"]
    })
    let stdout = ""
    let stderr = ""
    const exited = new Promise<void>((done) => child.once("exit", () => done()))
    const stop = async (within = 30_000) => {
      if (child.exitCode !== null || child.signalCode !== null) return
      child.kill("SIGTERM")
      const timer = setTimeout(() => child.kill("SIGKILL"), within)
      await exited
      clearTimeout(timer)
    }
    const timer = setTimeout(() => {
      void stop()
      reject(new Error(`the control plane was not ready within ${options.startWithin / 1000} s; it said:\n${stderr}`))
    }, options.startWithin)
    child.stdout.setEncoding("utf8")
    child.stderr.setEncoding("utf8")
    child.stdout.on("data", (chunk: string) => {
      stdout += chunk
      const info = parseControlPlaneInfo(stdout)
      if (info === undefined) return
      clearTimeout(timer)
      resolve({ info, child, stderr: () => stderr, stop })
    })
    child.stderr.on("data", (chunk: string) => {
      stderr += chunk
      options.onStderr?.(chunk)
    })
    child.once("exit", (code, signal) => {
      clearTimeout(timer)
      reject(new Error(`the control plane exited (${code ?? signal}) before it was ready; it said:\n${stderr}`))
    })
  })
