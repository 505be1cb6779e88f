/**
 * The documentation's shape: a README short enough to read through, that keeps the two
 * commands a newcomer runs and links to every page under docs/; relative links and
 * anchors that resolve, so a renamed page or heading is caught here rather than by a
 * reader; and a page for every diagnosis code, since the codes are what an operator greps.
 */
import { describe, expect, it } from "@effect/vitest"
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs"
import { dirname, join, relative, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { DIAGNOSIS_CODES } from "../src/domain/Diagnosis.js"

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..")
const read = (file: string): string => readFileSync(join(root, file), "utf8")

/** Every markdown file under `dir`, relative to the repository root. */
const markdownUnder = (dir: string): ReadonlyArray<string> =>
  readdirSync(join(root, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) return markdownUnder(path)
    return entry.name.endsWith(".md") ? [path] : []
  })

const documents = ["README.md", "CONTRIBUTING.md", ...markdownUnder("docs")]

/** The lines outside fenced code blocks, where a `[x](y)` is a link and a `#` a heading. */
const proseLines = (text: string): ReadonlyArray<string> => {
  const lines: Array<string> = []
  let fenced = false
  for (const line of text.split("\n")) {
    if (/^\s*(```|~~~)/.test(line)) {
      fenced = !fenced
      continue
    }
    if (!fenced) lines.push(line)
  }
  return lines
}

/** The link targets of a document, inline code left out (it may show link syntax as text). */
const linkTargets = (text: string): ReadonlyArray<string> =>
  proseLines(text).flatMap((line) =>
    [...line.replace(/`[^`]*`/g, "").matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map((match) => match[1]!)
  )

/** GitHub's anchor for a heading: lower case, punctuation but '-' and '_' dropped, spaces to '-'. */
const slug = (heading: string): string =>
  heading
    .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1")
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, "")
    .replace(/\s/g, "-")

/** Every anchor a markdown file has, a repeated heading numbered as GitHub numbers it. */
const anchorsOf = (file: string): ReadonlySet<string> => {
  const seen = new Map<string, number>()
  const anchors = new Set<string>()
  for (const line of proseLines(read(file))) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)
    if (heading === null) continue
    const base = slug(heading[1]!)
    const count = seen.get(base) ?? 0
    seen.set(base, count + 1)
    anchors.add(count === 0 ? base : `${base}-${count}`)
  }
  return anchors
}

/** Why a relative link from `from` does not resolve, or undefined when it does. */
const brokenLink = (from: string, target: string): string | undefined => {
  const [path = "", anchor] = target.split("#", 2)
  const file = path === "" ? from : relative(root, resolve(root, dirname(from), decodeURIComponent(path)))
  if (!existsSync(join(root, file))) return `${from}: ${target}: no file ${file}`
  if (anchor === undefined || anchor === "") return undefined
  if (statSync(join(root, file)).isDirectory() || !file.endsWith(".md")) {
    return `${from}: ${target}: not a markdown file`
  }
  return anchorsOf(file).has(anchor) ? undefined : `${from}: ${target}: ${file} has no heading #${anchor}`
}

describe("the README", () => {
  it("keeps the demo and test commands", () => {
    const readme = read("README.md")
    expect(readme).toContain("npm ci && npm start")
    expect(readme).toContain("npm ci && npm test")
  })

  it("links to every page under docs/ and to the diagnosis index", () => {
    const linked = new Set(linkTargets(read("README.md")).map((target) => target.split("#")[0]))
    const pages = [...markdownUnder("docs").filter((file) => dirname(file) === "docs"), "docs/diagnosis/README.md"]
    expect(pages.filter((page) => !linked.has(page))).toEqual([])
  })
})

describe("installing the packages", () => {
  it("is told from tarballs packed in a clone, never by a name the npm registry does not have yet", () => {
    // Neither package is published: `npm install session-routing` fails (or finds someone else's).
    const byName =
      /npm (?:install|i)(?: -D| --save-dev)? (?:session-routing|@session-routing\/local-cluster)(?![\w./-])/
    const files = [...documents, "packages/local-cluster/README.md"]
    expect(files.filter((file) => byName.test(read(file)))).toEqual([])
    // The docs pack with scripts on, as a clone must: `npm ci` builds nothing (the packages have
    // no install-time script), `prepack` does. The README names the tarballs npm writes.
    const readme = read("README.md")
    const version = (JSON.parse(read("package.json")) as { version: string }).version
    expect(readme).toContain("npm ci && npm pack --pack-destination /tmp")
    expect(files.filter((file) => read(file).includes("npm pack --ignore-scripts"))).toEqual([])
    expect(readme).toContain("-w @session-routing/local-cluster")
    expect(readme).toContain(`npm install /tmp/session-routing-${version}.tgz`)
    expect(readme).toContain(`npm install -D /tmp/session-routing-local-cluster-${version}.tgz`)
  })
})

describe("the documentation's links", () => {
  it("resolve to existing files and headings, in the README, CONTRIBUTING.md and docs/", () => {
    const relativeLinks = documents.flatMap((file) =>
      linkTargets(read(file))
        .filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target))
        .map((target) => ({ file, target }))
    )
    expect(relativeLinks.length).toBeGreaterThan(20)
    expect(relativeLinks.map(({ file, target }) => brokenLink(file, target)).filter((why) => why !== undefined))
      .toEqual([])
  })

  it("are read as GitHub names headings", () => {
    expect(slug("The `cluster` command")).toBe("the-cluster-command")
    expect(slug("What \"programmed\" means")).toBe("what-programmed-means")
    expect(slug("The public path: probes")).toBe("the-public-path-probes")
  })
})

describe("the diagnosis pages", () => {
  it("give every diagnosis code a page of its own, listed in the index", () => {
    const index = read("docs/diagnosis/README.md")
    expect(DIAGNOSIS_CODES.filter((code) => !existsSync(join(root, "docs", "diagnosis", `${code}.md`)))).toEqual([])
    expect(DIAGNOSIS_CODES.filter((code) => !index.includes(`](${code}.md)`))).toEqual([])
  })

  it("open each code's page with the code as its title", () => {
    const titles = DIAGNOSIS_CODES.map((code) => read(`docs/diagnosis/${code}.md`).split("\n")[0])
    expect(titles).toEqual(DIAGNOSIS_CODES.map((code) => `# ${code}`))
  })
})
