/**
 * Where build.sh puts the control plane's binaries, read the way build.sh reads it (the pins
 * of versions.env, the cache directory's variables), and running build.sh when something is
 * missing.
 */
import { Effect } from "effect"
import { spawn } from "node:child_process"
import { readFileSync } from "node:fs"
import { homedir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { ControlPlaneError } from "./ControlPlaneError.js"

const HERE = fileURLToPath(new URL(".", import.meta.url))
export const BUILD_SCRIPT = join(HERE, "build.sh")

export interface Versions {
  readonly kubernetes: string
  readonly etcd: string
  readonly kwok: string
  readonly traefik: string
}

/** The pins of versions.env (or of the file `SESSION_ROUTING_CONTROL_PLANE_VERSIONS` names, as build.sh reads it). */
export const versions = (): Versions => {
  const pins = new Map<string, string>()
  const file = process.env.SESSION_ROUTING_CONTROL_PLANE_VERSIONS?.trim() || join(HERE, "versions.env")
  for (const line of readFileSync(file, "utf8").split("\n")) {
    const match = /^([A-Z_]+)=(\S+)$/.exec(line.trim())
    if (match !== null) pins.set(match[1]!, match[2]!)
  }
  const pin = (name: string) => {
    const value = pins.get(name)
    if (value === undefined) throw new Error(`${file} has no ${name}`)
    return value
  }
  return {
    kubernetes: pin("KUBERNETES_VERSION"),
    etcd: pin("ETCD_VERSION"),
    kwok: pin("KWOK_VERSION"),
    traefik: pin("TRAEFIK_VERSION")
  }
}

/** The cache directory, as build.sh chooses it. */
export const cacheRoot = (): string => {
  const explicit = process.env.SESSION_ROUTING_CONTROL_PLANE_CACHE?.trim()
  if (explicit !== undefined && explicit !== "") return explicit
  const xdg = process.env.XDG_CACHE_HOME?.trim()
  return join(xdg !== undefined && xdg !== "" ? xdg : join(homedir(), ".cache"), "session-routing", "control-plane")
}

export interface Binaries {
  readonly etcd: string
  readonly kubeApiserver: string
  readonly kubeControllerManager: string
  readonly kubeScheduler: string
  readonly kwok: string
  readonly traefik: string
  /** The Gateway API CRDs (standard channel) of Traefik's Gateway API version. */
  readonly gatewayApiCrds: string
}

export const binaries = (pins: Versions = versions(), root: string = cacheRoot()): Binaries => {
  const kubernetes = join(root, `kubernetes-${pins.kubernetes}`, "bin")
  return {
    etcd: join(root, `etcd-${pins.etcd}`, "bin", "etcd"),
    kubeApiserver: join(kubernetes, "kube-apiserver"),
    kubeControllerManager: join(kubernetes, "kube-controller-manager"),
    kubeScheduler: join(kubernetes, "kube-scheduler"),
    kwok: join(root, `kwok-${pins.kwok}`, "bin", "kwok"),
    traefik: join(root, `traefik-${pins.traefik}`, "bin", "traefik"),
    gatewayApiCrds: join(root, `traefik-${pins.traefik}`, "gateway-api")
  }
}

/**
 * Runs build.sh, which builds what is missing and otherwise says in one line that nothing
 * is to do; its output goes to `onLine` (the supervisor's stderr: its stdout is for the
 * cluster's `key: value` lines).
 */
export const ensureBuilt = (onLine: (line: string) => void): Effect.Effect<void, ControlPlaneError> =>
  Effect.async<void, ControlPlaneError>((resume) => {
    // A group of its own, so stopping it stops the go commands it runs too.
    const child = spawn("bash", [BUILD_SCRIPT], { stdio: ["ignore", "pipe", "pipe"], detached: true })
    // The line that says what failed: build.sh names the component and version in it.
    let failure = ""
    const relay = (chunk: Buffer) => {
      for (const line of chunk.toString("utf8").split("\n")) {
        if (line.trim() === "") continue
        // The failure's line is the error's message, said once, by whoever reports the error.
        if (failure === "" && /^control plane build: .*(failed|needs Go)/.test(line)) failure = line
        else onLine(line)
      }
    }
    child.stdout.on("data", relay)
    child.stderr.on("data", relay)
    child.once(
      "error",
      (error) => resume(Effect.fail(new ControlPlaneError({ message: `cannot run ${BUILD_SCRIPT}: ${error.message}` })))
    )
    child.once("exit", (code, signal) =>
      resume(
        code === 0
          ? Effect.void
          : Effect.fail(new ControlPlaneError({ message: failure || `${BUILD_SCRIPT} ended with ${code ?? signal}` }))
      ))
    return Effect.sync(() => {
      if (child.pid !== undefined && child.exitCode === null) process.kill(-child.pid, "SIGTERM")
    })
  })
