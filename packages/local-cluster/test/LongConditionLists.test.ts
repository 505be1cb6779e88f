/**
 * A patch of a long keyed list (10,000 Pod conditions) costs work in proportion to the
 * list, not to its square: the strategic merge finds each patch item's place by its
 * merge key, and the managed-fields bookkeeping compares the two objects in one walk
 * each. Both once searched the list per item; a 10,000-condition patch took seconds,
 * during which the server answered nobody. The work is counted, not timed: every read
 * of a condition's fields goes through a counting Proxy.
 */
import { describe, expect, it } from "@effect/vitest"
import type { Pod, PodCondition } from "session-routing/kubernetes"
import { strategicMerge } from "../src/internal/strategicMerge.js"
import { shapeOf } from "../src/internal/typeShapes.js"
import { PodResource } from "../src/ServedResources.js"
import { decodeManagers, recordUpdate } from "../src/ServerSideApply.js"

/** Conditions `example.com/C0`… with `status`, each read counted in `reads`. */
const conditions = (n: number, status: PodCondition["status"], reads: { count: number }): Array<PodCondition> =>
  Array.from({ length: n }, (_, i) =>
    new Proxy({ type: `example.com/C${i}`, status }, {
      get: (target, key, receiver) => {
        reads.count++
        return Reflect.get(target, key, receiver)
      }
    }))

const pod = (status: NonNullable<Pod["status"]>): Pod => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name: "p", namespace: "demo", uid: "u", resourceVersion: "1" },
  spec: { containers: [{ name: "main", image: "registry.example/app:1.0" }] },
  status
})

/** The reads of conditions a strategic merge of `n` new conditions onto `n` others takes. */
const mergeReads = (n: number): number => {
  const reads = { count: 0 }
  const live = pod({
    conditions: Array.from({ length: n }, (_, i) => ({ type: `example.org/L${i}`, status: "True" as const }))
  })
  const merged = strategicMerge(live, { status: { conditions: conditions(n, "True", reads) } }, shapeOf(PodResource))
  expect((merged as Pod).status?.conditions?.length).toBe(2 * n)
  return reads.count
}

/** The reads of conditions recording a status write that flips `n` conditions takes. */
const recordReads = (n: number): number => {
  const reads = { count: 0 }
  const managers = recordUpdate({
    resource: PodResource,
    scope: "status",
    // Fields are tracked from the create on: an object with no managers records none.
    managers: decodeManagers([{
      manager: "creator",
      operation: "Update",
      apiVersion: "v1",
      fieldsType: "FieldsV1",
      fieldsV1: { "f:spec": { "f:containers": {} } }
    }]),
    manager: "controller",
    before: pod({ conditions: conditions(n, "False", reads) }),
    after: pod({ conditions: conditions(n, "True", reads) }),
    now: "2026-01-01T00:00:00Z"
  })
  // Each flipped status is now the writer's.
  expect([...managers.values()].map((m) => [m.manager, m.set.size])).toEqual([["creator", 1], ["controller", n]])
  return reads.count
}

describe("a patch of 10,000 conditions", () => {
  // A hundred times the list: about a hundred times the reads (generously, at most 150
  // times); searching the list per item made it ten thousand times.
  it("is merged with a number of reads in proportion to the list", () => {
    const small = mergeReads(100)
    expect(mergeReads(10_000)).toBeLessThanOrEqual(150 * small)
  })

  it("has its field ownership recorded with a number of reads in proportion to the list", () => {
    const small = recordReads(100)
    expect(recordReads(10_000)).toBeLessThanOrEqual(150 * small)
  })
})
