/**
 * Events over HTTP: a watch through events.k8s.io/v1 sees an Event created through
 * core/v1, filtered by the involved object; field selectors the server does not know
 * are a 400; and a Table of Events carries the columns `kubectl get events` prints.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { LocalCluster } from "../src/LocalCluster.js"
import { coreEvent, NS } from "./ClusterFixtures.js"
import { call, lineReader, send } from "./WireFixtures.js"

const CORE = `/api/v1/namespaces/${NS}/events`
const NEWER = `/apis/events.k8s.io/v1/namespaces/${NS}/events`
const TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"

describe("Events over HTTP", () => {
  it.scopedLive("watches through events.k8s.io what is created through core/v1, selected by the involved object", () =>
    Effect.gen(function*() {
      const { url } = yield* LocalCluster.make({ namespaces: [NS] })
      const controller = new AbortController()
      yield* Effect.addFinalizer(() => Effect.sync(() => controller.abort()))
      const response = yield* Effect.promise(() =>
        fetch(`${url}${NEWER}?watch=true&fieldSelector=involvedObject.name%3Dweb`, { signal: controller.signal })
      )
      expect(response.status).toBe(200)
      const next = lineReader(response)
      yield* send(url, "POST", CORE, coreEvent("other.1", { kind: "Pod", name: "other" }))
      yield* send(url, "POST", CORE, coreEvent("web.1", { kind: "Pod", name: "web" }, { message: "Pulled image" }))
      const event = JSON.parse((yield* Effect.promise(next))!)
      expect([
        event.type,
        event.object.apiVersion,
        event.object.metadata.name,
        event.object.note,
        event.object.regarding.name
      ]).toEqual([
        "ADDED",
        "events.k8s.io/v1",
        "web.1",
        "Pulled image",
        "web"
      ])
    }))

  it.scopedLive("refuses a field an Event cannot be selected by, and tabulates Events as kubectl get events prints them", () =>
    Effect.gen(function*() {
      const { url } = yield* LocalCluster.make({ namespaces: [NS] })
      const refused = yield* call(url, `${CORE}?fieldSelector=spec.host%3Dx`)
      expect([refused.status, refused.body.message]).toEqual([400, "field label not supported: spec.host"])
      yield* send(
        url,
        "POST",
        CORE,
        coreEvent("web.1", { kind: "Pod", name: "web" }, { type: "Warning", reason: "BackOff" })
      )
      for (const path of [CORE, NEWER]) {
        const table = yield* call(url, path, { headers: { accept: TABLE } })
        expect(
          table.body.columnDefinitions.filter((c: { priority: number }) => c.priority === 0).map((
            c: { name: string }
          ) => c.name)
        ).toEqual([
          "Last Seen",
          "Type",
          "Reason",
          "Object",
          "Message"
        ])
        expect(table.body.rows[0].cells.slice(1, 4)).toEqual(["Warning", "BackOff", "pod/web"])
      }
    }))

  // The newer view had no shape of its own: a wrong JSON type went through to the core
  // form and came back named by the core field (or not at all for a nested one).
  it.scopedLive("refuses an events.k8s.io Event field of the wrong JSON type, naming the newer field", () =>
    Effect.gen(function*() {
      const { url } = yield* LocalCluster.make({ namespaces: [NS] })
      const answer = yield* send(url, "POST", NEWER, {
        apiVersion: "events.k8s.io/v1",
        kind: "Event",
        metadata: { name: "web.1", namespace: NS },
        eventTime: "2024-01-01T00:00:00.000000Z",
        reportingController: "example.com/kubelet",
        reportingInstance: "node-1",
        action: "Started",
        regarding: { kind: "Pod", namespace: NS, name: "web" },
        deprecatedCount: "3"
      })
      expect([answer.status, answer.body.reason, answer.body.message]).toEqual([
        400,
        "BadRequest",
        "Event in version \"v1\" cannot be handled as a Event: json: cannot unmarshal string into Go struct field Event.deprecatedCount of type int32"
      ])
    }))
})
