/**
 * The label and field selector grammar, checked as a table: what parses, what it
 * selects, and the server's words for what does not parse.
 */
import { describe, expect, it } from "@effect/vitest"
import {
  matchesFields,
  matchesLabels,
  parseFieldSelector,
  parseLabelSelector,
  SelectorError
} from "../src/LabelSelector.js"

const select = (selector: string, labels: Record<string, string> | undefined): boolean => {
  const parsed = parseLabelSelector(selector)
  if (parsed instanceof SelectorError) throw new Error(`did not parse: ${selector}: ${parsed.message}`)
  return matchesLabels(parsed, labels)
}

const web = { app: "web", tier: "front", version: "3" }

describe("label selectors", () => {
  // [selector, labels, selected?]
  const table: ReadonlyArray<readonly [string, Record<string, string> | undefined, boolean]> = [
    ["", web, true],
    ["", undefined, true],
    ["app=web", web, true],
    ["app==web", web, true],
    ["app = web", web, true],
    ["app=api", web, false],
    ["app!=api", web, true],
    ["app!=web", web, false],
    ["missing!=x", web, true],
    ["app in (web,api)", web, true],
    ["app in (api)", web, false],
    ["app in(web)", web, true],
    ["missing in (x)", web, false],
    ["app notin (api,db)", web, true],
    ["app notin (web)", web, false],
    ["missing notin (x)", web, true],
    ["app", web, true],
    ["missing", web, false],
    ["!missing", web, true],
    ["!app", web, false],
    ["app=web,tier=front", web, true],
    ["app=web,tier=back", web, false],
    ["app in (web),!missing,tier", web, true],
    ["version>2", web, true],
    ["version<3", web, false],
    ["app>1", web, false],
    ["app=", { app: "" }, true],
    ["app=", web, false],
    ["app in ()", { app: "" }, true],
    ["app in (web,)", { app: "" }, true],
    ["app in (,api)", { app: "" }, true],
    ["app in (api,,db)", { app: "" }, true],
    ["app in (api,db)", { app: "" }, false],
    ["example.com/app=web", { "example.com/app": "web" }, true],
    ["app=web", undefined, false],
    ["app!=web", undefined, true]
  ]
  for (const [selector, labels, expected] of table) {
    it(`"${selector}" ${expected ? "selects" : "does not select"} ${JSON.stringify(labels)}`, () => {
      expect(select(selector, labels)).toBe(expected)
    })
  }

  const errors: ReadonlyArray<readonly [string, string]> = [
    ["app in (", "unable to parse requirement: found '', expected: ',', ')' or identifier"],
    ["app in web", "unable to parse requirement: found 'web' expected: '('"],
    ["=web", "found '=', expected: !, identifier, or 'end of string'"],
    ["app=web,", "found '', expected: identifier after ','"],
    ["app=web tier=front", "found 'tier', expected: ',' or 'end of string'"],
    ["app=(web)", "unable to parse requirement: found '(', expected: identifier"],
    ["app=a b", "found 'b', expected: ',' or 'end of string'"],
    ["!app=web", "found '=', expected: ',' or 'end of string'"],
    // Checked against kube-apiserver 1.35 (test/contract/ListWatch.contract.test.ts).
    ["app in (web", "unable to parse requirement: found '', expected: ',' or ')'"],
    ["app in (web api)", "unable to parse requirement: found 'api', expected: ',' or ')'"],
    ["app in (web,=)", "unable to parse requirement: found '=', expected: ',', or identifier"],
    [
      "version>x",
      `unable to parse requirement: values[0]: Invalid value: "x": for 'Gt', 'Lt' operators, the value must be an integer`
    ]
  ]
  for (const [selector, message] of errors) {
    it(`refuses "${selector}" as the server does`, () => {
      const parsed = parseLabelSelector(selector)
      expect(parsed).toBeInstanceOf(SelectorError)
      expect((parsed as SelectorError).message).toBe(message)
    })
  }

  it("refuses a key that is not a qualified name", () => {
    const parsed = parseLabelSelector("-app=web")
    expect((parsed as SelectorError).message).toMatch(
      /^unable to parse requirement: key: Invalid value: "-app": name part must consist of alphanumeric characters/
    )
  })

  it("refuses a value that is not a label value", () => {
    const parsed = parseLabelSelector(`app=${"x".repeat(64)}`)
    expect((parsed as SelectorError).message).toContain("must be no more than 63 characters")
  })
})

describe("field selectors", () => {
  const fields = { "metadata.name": "web", "metadata.namespace": "demo" }

  it("selects by name and namespace with =, == and !=", () => {
    const cases: ReadonlyArray<readonly [string, boolean]> = [
      ["metadata.name=web", true],
      ["metadata.name==web", true],
      ["metadata.name!=web", false],
      ["metadata.namespace=demo,metadata.name=web", true],
      ["metadata.namespace=other", false],
      ["", true]
    ]
    for (const [selector, expected] of cases) {
      const parsed = parseFieldSelector(selector)
      if (parsed instanceof SelectorError) throw new Error(parsed.message)
      expect(matchesFields(parsed, fields)).toBe(expected)
    }
  })

  it("refuses fields the resource does not index", () => {
    expect(parseFieldSelector("spec.host=x")).toEqual(
      new SelectorError(`"spec.host" is not a known field selector: only "metadata.name", "metadata.namespace"`)
    )
  })

  it("refuses a term without an operator", () => {
    expect(parseFieldSelector("metadata.name")).toBeInstanceOf(SelectorError)
  })
})
