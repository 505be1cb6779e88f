/**
 * How unpublish removes a session's objects: only a server that is not there ends the
 * attempt early (`serverDidNotAnswer`), never one that answered with an error, and an
 * object left untried is named among those that may remain.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { IngressResource, ServiceResource } from "../../../src/domain/Resources.js"
import {
  removeObject,
  removeSessionObjects,
  serverDidNotAnswer
} from "../../../src/layers/sessionRouter/SessionObjects.js"
import { runUnpublish } from "../../../src/layers/sessionRouter/Unpublish.js"
import type { KubeClient } from "../../../src/services/KubeClient.js"
import { Transport, Unavailable } from "../../../src/services/KubeError.js"

describe("which failure ends an unpublish early", () => {
  it.each(["no-answer", "refused", "dns"] as const)(
    "takes a transport failure of kind %s for no answer, whatever its words",
    (kind) => {
      expect(serverDidNotAnswer(new Transport({ reason: "something went wrong", kind }))).toBe(true)
    }
  )

  it.each(["tls", "other"] as const)(
    "does not take a transport failure of kind %s with no telling words for no answer",
    (kind) => {
      expect(serverDidNotAnswer(new Transport({ reason: "socket hang up", kind }))).toBe(false)
    }
  )

  it("reads the words of a transport failure that carries no kind", () => {
    expect(serverDidNotAnswer(new Transport({ reason: "connect ECONNREFUSED 127.0.0.1:6443" }))).toBe(true)
    expect(serverDidNotAnswer(new Transport({ reason: "socket hang up" }))).toBe(false)
  })

  it("never takes an answer for no answer, even one whose words say so", () => {
    expect(serverDidNotAnswer(new Unavailable({ reason: "the upstream gave no answer" }))).toBe(false)
  })
})

describe("what an unpublish that stopped early says may remain", () => {
  it.effect("names an object by its kind, namespace and name when the unpublish stopped before trying it", () =>
    Effect.gen(function*() {
      const noAnswer = new Transport({ reason: "no answer within 10s", kind: "no-answer" })
      // Lists get no answer; no delete runs before the unpublish stops.
      const kube = {
        list: () => Effect.fail(noAnswer),
        delete: () => Effect.dieMessage("a delete ran after the server stopped answering")
      } as unknown as KubeClient.Service
      const failure = yield* Effect.flip(runUnpublish("s1", [
        removeSessionObjects(
          kube,
          ServiceResource,
          "ns",
          "session=s1"
        ),
        removeObject(kube, IngressResource, "ns", "telo-run-s1")
      ]))
      expect(failure.reason).toBe(
        "could not remove every object of session s1; these may remain: " +
          "the session's Service objects (could not list them: no answer within 10s); " +
          "Ingress ns/telo-run-s1 (not tried: the API server stopped answering)"
      )
    }))
})
