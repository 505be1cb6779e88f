/**
 * build.sh's answers that need no Go and no network, in `npm test`: a warm cache says so in
 * one line and builds nothing; a machine without Go (or with an old one) is told what to
 * install in one line, exit 1; an unknown argument is refused. Building itself, and a build
 * that fails, are tested with the real control plane (BuildFailure.cluster.test.ts).
 */
import { describe, expect, it } from "@effect/vitest"
import { execFile } from "node:child_process"
import { chmod, mkdir, mkdtemp, readdir, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { binaries, BUILD_SCRIPT, versions } from "./Build.js"

interface Run {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

const run = (args: ReadonlyArray<string>, env: Record<string, string>): Promise<Run> =>
  new Promise((resolve) => {
    execFile("bash", [BUILD_SCRIPT, ...args], { env, timeout: 30_000 }, (error, stdout, stderr) =>
      resolve({ code: error === null ? 0 : typeof error.code === "number" ? error.code : -1, stdout, stderr }))
  })

/** A PATH with bash and coreutils but no `go`, or a fake `go` reporting `version`. */
const pathWithGo = async (dir: string, version: string | undefined): Promise<string> => {
  const bin = join(dir, "bin")
  await mkdir(bin, { recursive: true })
  if (version !== undefined) {
    await writeFile(join(bin, "go"), `#!/bin/sh\n[ "$1 $2" = "env GOVERSION" ] && echo ${version} && exit 0\nexit 99\n`)
    await chmod(join(bin, "go"), 0o755)
  }
  return `${bin}:/usr/bin:/bin`
}

describe("test/control-plane/build.sh", () => {
  it("says in one line that every component is built and does nothing, without asking for Go", async () => {
    const cache = await mkdtemp(join(tmpdir(), "control-plane-cache-"))
    try {
      const bins = binaries(versions(), cache)
      for (
        const dir of new Set([bins.etcd, bins.kubeApiserver, bins.kwok, bins.traefik].map((b) => join(b, "..", "..")))
      ) {
        await mkdir(dir, { recursive: true })
        await writeFile(join(dir, "complete"), "built\n")
      }
      const warm = await run([], {
        PATH: await pathWithGo(cache, undefined),
        HOME: cache,
        SESSION_ROUTING_CONTROL_PLANE_CACHE: cache
      })
      const pins = versions()
      expect(warm).toEqual({
        code: 0,
        stdout:
          `control plane: Kubernetes ${pins.kubernetes}, etcd ${pins.etcd}, kwok ${pins.kwok}, Traefik ${pins.traefik} already built in ${cache}; nothing to do\n`,
        stderr: ""
      })
    } finally {
      await rm(cache, { recursive: true, force: true })
    }
  })

  it("says in one line what to install when there is no Go, or too old a one, and leaves the cache empty", async () => {
    const dir = await mkdtemp(join(tmpdir(), "control-plane-nogo-"))
    try {
      const cache = join(dir, "cache")
      const env = (path: string) => ({ PATH: path, HOME: dir, SESSION_ROUTING_CONTROL_PLANE_CACHE: cache })
      const none = await run([], env(await pathWithGo(join(dir, "none"), undefined)))
      expect(none).toEqual({
        code: 1,
        stdout: "",
        stderr:
          "control plane build: needs Go 1.26 or later on the PATH (https://go.dev/doc/install); no go command found\n"
      })
      const old = await run([], env(await pathWithGo(join(dir, "old"), "go1.25.4")))
      expect(old).toEqual({
        code: 1,
        stdout: "",
        stderr: "control plane build: needs Go 1.26 or later (https://go.dev/doc/install); found go1.25.4\n"
      })
      expect(await readdir(dir)).not.toContain("cache")
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })

  it("prints where the cache is with --where, and refuses any other argument", async () => {
    const env = { PATH: "/usr/bin:/bin", HOME: "/home/someone", XDG_CACHE_HOME: "/var/cache/someone" }
    expect(await run(["--where"], env)).toEqual({
      code: 0,
      stdout: "/var/cache/someone/session-routing/control-plane\n",
      stderr: ""
    })
    expect(await run(["--clean"], env)).toEqual({
      code: 2,
      stdout: "",
      stderr: "control plane build: unknown argument --clean (the only one is --where)\n"
    })
  })
})
