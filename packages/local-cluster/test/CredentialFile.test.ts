import { describe, expect, it } from "@effect/vitest"
import {
  chmodSync,
  lstatSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync
} from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterEach } from "vitest"
import { writeCredentialFile } from "../src/CredentialFile.js"

const dirs: Array<string> = []
const scratch = () => {
  const dir = mkdtempSync(join(tmpdir(), "credential-file-"))
  dirs.push(dir)
  return dir
}
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
})

const modeOf = (path: string) => statSync(path).mode & 0o777

describe("writeCredentialFile", () => {
  it("creates a new file readable by its owner alone", async () => {
    const path = join(scratch(), "kubeconfig")
    await writeCredentialFile(path, "token: secret\n")
    expect(readFileSync(path, "utf8")).toBe("token: secret\n")
    expect(modeOf(path)).toBe(0o600)
  })

  it("replaces an existing world-readable file with a 0600 one, leaving no temporary file", async () => {
    const dir = scratch()
    const path = join(dir, "kubeconfig")
    writeFileSync(path, "old")
    chmodSync(path, 0o644)
    await writeCredentialFile(path, "new")
    expect(readFileSync(path, "utf8")).toBe("new")
    expect(modeOf(path)).toBe(0o600)
    expect(readdirSync(dir)).toEqual(["kubeconfig"])
  })

  it("refuses a symbolic link, naming it, and leaves the file it points to untouched", async () => {
    const dir = scratch()
    const target = join(dir, "elsewhere")
    writeFileSync(target, "not yours")
    const link = join(dir, "kubeconfig")
    symlinkSync(target, link)
    await expect(writeCredentialFile(link, "secret")).rejects.toThrow(`${link} is a symbolic link`)
    expect(readFileSync(target, "utf8")).toBe("not yours")
    expect(lstatSync(link).isSymbolicLink()).toBe(true)
  })

  it("refuses a directory in the way", async () => {
    const dir = scratch()
    await expect(writeCredentialFile(dir, "secret")).rejects.toThrow(`${dir} exists and is not a regular file`)
  })

  // The file is first written under a temporary name beside it; Node's error names that one.
  it("names the directory, not the temporary file, when the directory does not exist", async () => {
    const dir = join(scratch(), "missing")
    const failure = await writeCredentialFile(join(dir, "kubeconfig"), "secret").catch((error: Error) => error)
    expect((failure as Error).message).toBe(`the directory ${dir} does not exist`)
  })
})
