/**
 * A watch started again from what its caller had seen (`known`) without a
 * resourceVersion: its first list reports the difference against those objects, a
 * deletion included, as client-go's reflector Replace does, so that an object deleted
 * while the caller's watch was down is seen to go.
 */
import { describe, expect, it } from "@effect/vitest"
import { Chunk, Effect, Stream } from "effect"
import type { Ingress, ObjectList } from "../../../src/domain/Objects.js"
import { IngressResource } from "../../../src/domain/Resources.js"
import { makeKubeClient } from "../../../src/layers/kubeClient/ResumableWatch.js"
import type { KubeClientPrimitives, WatchOptions } from "../../../src/services/KubeClient.js"

const ing = (name: string, resourceVersion: string, uid = `uid-${name}`): Ingress => ({
  apiVersion: "networking.k8s.io/v1",
  kind: "Ingress",
  metadata: { name, namespace: "ns", resourceVersion, uid }
})

/** Primitives whose every list answers `listed` at resourceVersion 20, and whose watches stay open and silent. */
const listing = (listed: ReadonlyArray<Ingress>) => {
  const calls: Array<string> = []
  const die = () => Effect.die("not used")
  const primitives: KubeClientPrimitives = {
    apply: die,
    get: die,
    delete: die,
    list: (() =>
      Effect.sync(() => {
        calls.push("list")
        const answer: ObjectList<Ingress> = {
          kind: "IngressList",
          apiVersion: "networking.k8s.io/v1",
          metadata: { resourceVersion: "20" },
          items: listed
        }
        return answer
      })) as KubeClientPrimitives["list"],
    watchFrom: ((_resource, _namespace, options) =>
      Stream.suspend(() => {
        calls.push(`watch ${options.resourceVersion}`)
        return Stream.never
      })) as KubeClientPrimitives["watchFrom"]
  }
  return { calls, primitives }
}

const first = (primitives: KubeClientPrimitives, n: number, options: WatchOptions<Ingress>) =>
  makeKubeClient(primitives).watch(IngressResource, "ns", options).pipe(
    Stream.take(n),
    Stream.runCollect,
    Effect.map(Chunk.toReadonlyArray)
  )

describe("a watch started from a list with the objects its caller knows", () => {
  it.effect("reports what changed against them, a deletion included, and nothing for what is unchanged", () =>
    Effect.gen(function*() {
      const { calls, primitives } = listing([ing("kept", "3"), ing("changed", "8"), ing("new", "9")])
      const events = yield* first(primitives, 3, {
        known: [ing("kept", "3"), ing("changed", "5"), ing("gone", "4")]
      })
      expect(events).toEqual([
        { type: "MODIFIED", object: ing("changed", "8") },
        { type: "ADDED", object: ing("new", "9") },
        // Deleted while the caller's watch was down: what it knew of the object.
        { type: "DELETED", object: ing("gone", "4") }
      ])
      expect(calls).toEqual(["list"])
    }))

  it.effect("reports a name that now holds another object as deleted and added", () =>
    Effect.gen(function*() {
      const { primitives } = listing([ing("pod", "9", "uid-new")])
      const events = yield* first(primitives, 2, { known: [ing("pod", "4", "uid-old")] })
      expect(events).toEqual([
        { type: "DELETED", object: ing("pod", "4", "uid-old") },
        { type: "ADDED", object: ing("pod", "9", "uid-new") }
      ])
    }))

  it.effect("keeps what `remember` returns of them, as a relist does", () =>
    Effect.gen(function*() {
      const { primitives } = listing([])
      const slim = (object: Ingress): Ingress => ({ metadata: { ...object.metadata, labels: { slim: "yes" } } })
      const events = yield* first(primitives, 1, { known: [ing("gone", "4")], remember: slim })
      expect(events).toEqual([{ type: "DELETED", object: slim(ing("gone", "4")) }])
    }))

  it.effect("opens with one ADDED per object when it knows none, as before", () =>
    Effect.gen(function*() {
      const { primitives } = listing([ing("a", "3")])
      expect(yield* first(primitives, 1, {})).toEqual([{ type: "ADDED", object: ing("a", "3") }])
      expect(yield* first(primitives, 1, { known: [] })).toEqual([{ type: "ADDED", object: ing("a", "3") }])
    }))
})
