/**
 * `npm run cluster:real` as a process, in `npm run test:cluster`: it serves Kubernetes 1.35
 * to kubectl, stops every component on SIGTERM, names a component that dies and stops the
 * rest, and refuses a port in use in one line before starting anything.
 */
import { describe, expect, it } from "@effect/vitest"
import { execFile, spawn } from "node:child_process"
import { mkdtemp, rm } from "node:fs/promises"
import { createServer, type Server } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import { inject } from "vitest"
import { type ControlPlaneProcess, startControlPlaneProcess } from "./ControlPlaneProcess.js"

const MAIN = fileURLToPath(new URL("main.ts", import.meta.url))
const kubectl = inject("bundledKubectl") ?? process.env.KUBECTL ?? "kubectl"

/** The processes `parent` started that are still there. */
const childrenOf = async (parent: number): Promise<ReadonlyArray<number>> => {
  const { stdout } = await promisify(execFile)("ps", ["-o", "pid=", "--ppid", String(parent)]).catch(() => ({
    stdout: ""
  }))
  return stdout.split("\n").map((line) => Number(line.trim())).filter((pid) => pid > 0)
}

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

const exited = (cp: ControlPlaneProcess) =>
  new Promise<number | null>((resolve) => {
    if (cp.child.exitCode !== null) return resolve(cp.child.exitCode)
    cp.child.once("exit", (code) => resolve(code))
  })

const withControlPlane = async (test: (cp: ControlPlaneProcess, dir: string) => Promise<void>) => {
  const dir = await mkdtemp(join(tmpdir(), "control-plane-test-"))
  const cp = await startControlPlaneProcess(["--kubeconfig", join(dir, "kubeconfig"), "--no-build"], {
    startWithin: 120_000
  })
  try {
    await test(cp, dir)
  } finally {
    await cp.stop()
    await rm(dir, { recursive: true, force: true })
  }
}

describe("npm run cluster:real", () => {
  it("serves Kubernetes 1.35 to kubectl, and stops every process it started on SIGTERM", async () => {
    await withControlPlane(async (cp) => {
      const { stdout } = await promisify(execFile)(kubectl, [
        "--kubeconfig",
        cp.info.kubeconfig,
        "get",
        "--raw",
        "/version"
      ])
      expect(JSON.parse(stdout)).toMatchObject({ major: "1", minor: "35", gitVersion: cp.info.kubernetes })
      expect(cp.info.kubernetes).toMatch(/^v1\.35\.\d+$/)
      const components = await childrenOf(cp.child.pid!)
      // etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kwok, traefik.
      expect(components).toHaveLength(6)
      const ended = exited(cp)
      cp.child.kill("SIGTERM")
      expect(await ended).toBe(0)
      expect(components.filter(alive)).toEqual([])
      expect(cp.stderr()).toContain("control plane stopped")
    })
  }, 180_000)

  it("names a component that dies, stops the others and exits 1", async () => {
    await withControlPlane(async (cp) => {
      const components = await childrenOf(cp.child.pid!)
      const { stdout } = await promisify(execFile)("ps", ["-o", "pid=,comm=", "--ppid", String(cp.child.pid)])
      const traefik = stdout.split("\n").map((line) => line.trim().split(/\s+/)).find(([, name]) => name === "traefik")
      expect(traefik).toBeDefined()
      const ended = exited(cp)
      process.kill(Number(traefik![0]), "SIGKILL")
      expect(await ended).toBe(1)
      expect(cp.stderr()).toMatch(/cluster:real: traefik was killed by SIGKILL; the end of \S+traefik\.log:/)
      expect(components.filter(alive)).toEqual([])
    })
  }, 180_000)

  it("refuses an API server port in use, in one line, before starting anything", async () => {
    const taken = await new Promise<Server>((resolve) => {
      const server = createServer()
      server.listen(0, "127.0.0.1", () => resolve(server))
    })
    const port = (taken.address() as { port: number }).port
    const dir = await mkdtemp(join(tmpdir(), "control-plane-test-"))
    try {
      const child = spawn(
        process.execPath,
        ["--import", "tsx", MAIN, "--kubeconfig", join(dir, "kubeconfig"), "--no-build", "--port", String(port)],
        { stdio: ["ignore", "pipe", "pipe"] }
      )
      let stderr = ""
      let stdout = ""
      child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()))
      child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()))
      const code = await new Promise<number | null>((resolve) => child.once("exit", resolve))
      expect([code, stdout]).toEqual([1, ""])
      expect(stderr.trim().split("\n").at(-1)).toBe(
        `cluster:real: port ${port} (kube-apiserver) is in use on 127.0.0.1: pick another, or 0 for a free one`
      )
      expect(stderr).not.toContain("starting etcd")
    } finally {
      taken.close()
      await rm(dir, { recursive: true, force: true })
    }
  }, 60_000)
})
