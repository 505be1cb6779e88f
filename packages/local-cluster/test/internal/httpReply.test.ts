import { describe, expect, it } from "vitest"
import { parseYamlOrJson, Refused } from "../../src/internal/httpReply.js"

describe("reading an apply patch body", () => {
  it("reads a JSON body as JSON, keys and values exactly as sent", () => {
    const body = {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: "web", labels: { a: "1" } },
      spec: { ports: [{ port: 80 }] }
    }
    expect(parseYamlOrJson(JSON.stringify(body))).toEqual(body)
    expect(parseYamlOrJson(`  \n${JSON.stringify(body, null, 2)}`)).toEqual(body)
  })

  it("still reads YAML in flow style, which starts like JSON but is not", () => {
    expect(parseYamlOrJson("{kind: Service, metadata: {name: web}}")).toEqual({
      kind: "Service",
      metadata: { name: "web" }
    })
  })

  it("reads block YAML as YAML", () => {
    expect(parseYamlOrJson("kind: Service\nmetadata:\n  name: web\n")).toEqual({
      kind: "Service",
      metadata: { name: "web" }
    })
  })

  it("refuses a body that is neither, with the server's 400 wording", () => {
    let refused: unknown
    try {
      parseYamlOrJson("{kind: [unclosed")
    } catch (e) {
      refused = e
    }
    expect(refused).toBeInstanceOf(Refused)
    expect((refused as Refused).status).toMatchObject({ code: 400, reason: "BadRequest" })
    expect((refused as Refused).status.message).toMatch(/^error decoding YAML: /)
  })
})
