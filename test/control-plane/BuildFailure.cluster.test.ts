/**
 * A build that fails names the component and version, and leaves the cache as it was: run
 * by `npm run test:cluster` (it needs Go), offline (GOPROXY=off and an empty module cache
 * make the download fail as a proxy refusal would, without leaving this machine).
 */
import { describe, expect, it } from "@effect/vitest"
import { execFile } from "node:child_process"
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { binaries, BUILD_SCRIPT, versions } from "./Build.js"

describe("test/control-plane/build.sh, failing", () => {
  it("names the component and version that failed and leaves nothing of it in the cache", async () => {
    const dir = await mkdtemp(join(tmpdir(), "control-plane-failing-"))
    try {
      const cache = join(dir, "cache")
      const pins = versions()
      // The pins with a kwok that does not exist; every other component already built.
      const pinFile = join(dir, "versions.env")
      const original = await readFile(new URL("versions.env", import.meta.url), "utf8")
      await writeFile(pinFile, original.replace(/^KWOK_VERSION=.*$/m, "KWOK_VERSION=v0.0.999"))
      const bins = binaries(pins, cache)
      for (const built of [bins.etcd, bins.kubeApiserver, bins.traefik].map((b) => join(b, "..", ".."))) {
        await mkdir(built, { recursive: true })
        await writeFile(join(built, "complete"), "built\n")
      }
      const before = (await readdir(cache)).sort()
      const failed = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) =>
        execFile("bash", [BUILD_SCRIPT], {
          timeout: 120_000,
          env: {
            ...process.env,
            SESSION_ROUTING_CONTROL_PLANE_CACHE: cache,
            SESSION_ROUTING_CONTROL_PLANE_VERSIONS: pinFile,
            GOPROXY: "off",
            GOMODCACHE: join(dir, "gomodcache"),
            GOFLAGS: ""
          }
        }, (error, stdout, stderr) => resolve({ code: error === null ? 0 : Number(error.code), stdout, stderr }))
      )
      expect(failed.code, failed.stderr).toBe(1)
      expect(failed.stdout).toContain("control plane build: kwok v0.0.999\n")
      expect(failed.stderr.split("\n")[0]).toBe(
        "control plane build: kwok v0.0.999 (download) failed; the last lines of its output:"
      )
      expect(failed.stderr).toContain("sigs.k8s.io/kwok@v0.0.999")
      // No kwok directory, no scratch directory: the cache is as it was.
      expect((await readdir(cache)).sort()).toEqual(before)
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  }, 180_000)
})
