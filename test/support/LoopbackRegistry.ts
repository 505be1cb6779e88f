/**
 * An npm registry on 127.0.0.1 that serves exactly the packages this repository's
 * package-lock.json pins, from npm's own cache: each package's metadata from the
 * lockfile entries, each tarball from the cache's content store by its integrity.
 * A test can then `npm install` the packed packages into a fresh project, resolving
 * their dependencies as a consumer's install would, without reaching any other
 * address. A package the lockfile does not pin answers 404, as an unknown package
 * does on the public registry; a tarball missing from the cache answers 404 naming
 * it (`npm ci` fills the cache).
 */
import { Effect, type Scope } from "effect"
import { createReadStream, existsSync, readFileSync } from "node:fs"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import { join } from "node:path"

/** A lockfile entry, as package-lock.json v3 writes it. */
interface LockEntry {
  readonly name?: string
  readonly version?: string
  readonly integrity?: string
  readonly link?: boolean
  readonly dependencies?: Record<string, string>
  readonly optionalDependencies?: Record<string, string>
  readonly peerDependencies?: Record<string, string>
  readonly peerDependenciesMeta?: Record<string, unknown>
  readonly engines?: Record<string, string>
  readonly os?: ReadonlyArray<string>
  readonly cpu?: ReadonlyArray<string>
  readonly bin?: Record<string, string>
}

/** What the registry serves, and every package name it was asked for. */
export interface LoopbackRegistry {
  readonly url: string
  readonly requested: ReadonlyArray<string>
}

/** The package name of a lockfile key: `node_modules/a/node_modules/@b/c` → `@b/c`. */
const nameOfKey = (key: string): string => key.slice(key.lastIndexOf("node_modules/") + "node_modules/".length)

/** Where npm's cache keeps the content with this integrity (`sha512-<base64>`). */
export const cachedContentPath = (cacheDir: string, integrity: string): string => {
  const [algorithm = "", digest = ""] = integrity.split(" ")[0]!.split("-", 2)
  const hex = Buffer.from(digest, "base64").toString("hex")
  return join(cacheDir, "_cacache", "content-v2", algorithm, hex.slice(0, 2), hex.slice(2, 4), hex.slice(4))
}

/** The lockfile's packages by name, each with its versions' metadata. */
const packumentsOf = (lockfile: string) => {
  const { packages } = JSON.parse(readFileSync(lockfile, "utf8")) as { packages: Record<string, LockEntry> }
  const byName = new Map<string, Map<string, LockEntry>>()
  for (const [key, entry] of Object.entries(packages)) {
    if (!key.includes("node_modules/") || entry.link === true || entry.version === undefined) continue
    if (entry.integrity === undefined) continue
    const name = nameOfKey(key)
    const versions = byName.get(name) ?? new Map<string, LockEntry>()
    versions.set(entry.version, entry)
    byName.set(name, versions)
  }
  return byName
}

/** Serves the registry until the scope closes. */
export const serveLoopbackRegistry = (options: {
  readonly lockfile: string
  readonly cacheDir: string
}): Effect.Effect<LoopbackRegistry, never, Scope.Scope> =>
  Effect.gen(function*() {
    const byName = packumentsOf(options.lockfile)
    const requested: Array<string> = []
    let base = ""
    const tarballUrl = (name: string, version: string) => `${base}/-/tarball/${encodeURIComponent(name)}/${version}.tgz`
    const packument = (name: string, versions: Map<string, LockEntry>) => {
      const entries = [...versions.entries()].map(([version, entry]) => {
        const { integrity, link: _link, name: _name, ...fields } = entry
        return [version, { ...fields, name, version, dist: { tarball: tarballUrl(name, version), integrity } }]
      })
      const latest = entries.map(([version]) => version as string).at(-1)!
      return { name, "dist-tags": { latest }, versions: Object.fromEntries(entries) }
    }
    const server = Http.createServer((req, res) => {
      const path = decodeURIComponent(new URL(req.url ?? "/", "http://registry").pathname)
      const notFound = (error: string) => {
        res.writeHead(404, { "content-type": "application/json" })
        res.end(JSON.stringify({ error }))
      }
      const tarball = /^\/-\/tarball\/(.+)\/([^/]+)\.tgz$/.exec(path)
      if (tarball !== null) {
        const integrity = byName.get(tarball[1]!)?.get(tarball[2]!)?.integrity
        const file = integrity === undefined ? undefined : cachedContentPath(options.cacheDir, integrity)
        if (file === undefined || !existsSync(file)) return notFound(`not in the npm cache (run npm ci): ${integrity}`)
        res.writeHead(200, { "content-type": "application/octet-stream" })
        createReadStream(file).pipe(res)
        return
      }
      const name = path.slice(1)
      requested.push(name)
      const versions = byName.get(name)
      if (versions === undefined) return notFound("Not found")
      res.writeHead(200, { "content-type": "application/json" })
      res.end(JSON.stringify(packument(name, versions)))
    })
    yield* Effect.acquireRelease(
      Effect.async<void>((resume) => {
        server.listen(0, "127.0.0.1", () => resume(Effect.void))
      }),
      () =>
        Effect.async<void>((resume) => {
          server.close(() => resume(Effect.void))
          server.closeAllConnections()
        })
    )
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
    return { url: `${base}/`, requested }
  })
