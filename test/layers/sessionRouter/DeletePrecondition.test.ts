/**
 * A delete with a uid precondition, through both faces of the client: the object of
 * that uid goes; another one made under the same name since it was read stays, with
 * the server's Conflict.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either } from "effect"
import type { Service } from "../../../src/domain/Objects.js"
import { ServiceResource } from "../../../src/domain/Resources.js"
import { removeSessionObjects } from "../../../src/layers/sessionRouter/SessionObjects.js"
import { KubeClient } from "../../../src/services/KubeClient.js"
import { faces, kubeClientLayer, startCluster } from "../../support/RouterHarness.js"

const service = (namespace: string): Service => ({
  apiVersion: "v1",
  kind: "Service",
  metadata: { name: "s", namespace },
  spec: { ports: [{ port: 80 }] }
})

for (const face of faces) {
  describe(`delete with a uid precondition (${face})`, () => {
    // What kube-apiserver answers then is the registry's "the UID in the precondition (…)
    // does not match the UID in record (…)": the removal must know those words.
    it.live("an unpublish leaves an object made under the name since it was listed, as not its to remove", () =>
      Effect.scoped(Effect.gen(function*() {
        const sc = yield* startCluster()
        const kube = yield* Effect.provide(KubeClient, kubeClientLayer(face, sc.cluster))
        const owned: Service = {
          ...service(sc.namespace),
          metadata: {
            name: "s",
            namespace: sc.namespace,
            labels: { session: "s1" },
            ownerReferences: [{ apiVersion: "v1", kind: "Pod", name: "p", uid: "pod-1", controller: true }]
          }
        }
        yield* kube.apply(ServiceResource, owned)
        const targets = yield* removeSessionObjects(kube, ServiceResource, sc.namespace, "session=s1").find
        yield* kube.delete(ServiceResource, sc.namespace, "s")
        const replacement = yield* kube.apply(ServiceResource, owned)
        expect(yield* Effect.forEach(targets, (target) => target.remove)).toEqual([false])
        expect((yield* kube.get(ServiceResource, sc.namespace, "s")).metadata?.uid).toBe(replacement.metadata?.uid)
      })))

    it.live("deletes the object of that uid and leaves one that replaced it", () =>
      Effect.scoped(Effect.gen(function*() {
        const sc = yield* startCluster()
        const kube = yield* Effect.provide(KubeClient, kubeClientLayer(face, sc.cluster))
        const first = yield* kube.apply(ServiceResource, service(sc.namespace))
        yield* kube.delete(ServiceResource, sc.namespace, "s")
        const second = yield* kube.apply(ServiceResource, service(sc.namespace))
        expect(second.metadata?.uid).not.toBe(first.metadata?.uid)
        // The first one's uid: the object now under that name is another one.
        const refused = yield* Effect.either(
          kube.delete(ServiceResource, sc.namespace, "s", { uid: first.metadata!.uid! })
        )
        expect(Either.isLeft(refused) && refused.left._tag).toBe("Conflict")
        expect(Either.isLeft(refused) && refused.left.reason).toContain(
          `the UID in the precondition (${first.metadata!
            .uid!}) does not match the UID in record (${second.metadata?.uid})`
        )
        expect((yield* kube.get(ServiceResource, sc.namespace, "s")).metadata?.uid).toBe(second.metadata?.uid)
        yield* kube.delete(ServiceResource, sc.namespace, "s", { uid: second.metadata!.uid! })
        const gone = yield* Effect.either(kube.get(ServiceResource, sc.namespace, "s"))
        expect(Either.isLeft(gone) && gone.left._tag).toBe("NotFound")
      })))
  })
}
