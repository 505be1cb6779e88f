/**
 * The DefaultIngressClass admission plugin kube-apiserver runs by default: a new Ingress
 * that names no class gets the class annotated `ingressclass.kubernetes.io/is-default-class`,
 * on create only, as nobody's field. In the store and over HTTP.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, TestClock } from "effect"
import type { Ingress, IngressClass } from "session-routing/kubernetes"
import { ingressClassFor } from "../src/IngressController.js"
import { LocalCluster } from "../src/LocalCluster.js"
import { makeMemoryStore } from "../src/MemoryStore.js"
import { IngressClassResource, IngressResource } from "../src/ServedResources.js"
import { ingress, NS } from "./ClusterFixtures.js"
import { send } from "./WireFixtures.js"

const DEFAULT = "ingressclass.kubernetes.io/is-default-class"

const defaultClass = (name: string): IngressClass => ingressClassFor({ className: name, defaultClass: true })

/** A store holding `classes`, created in order; "next second" moves the clock between two. */
const storeWith = (classes: ReadonlyArray<IngressClass | "next second">) =>
  Effect.gen(function*() {
    const store = yield* makeMemoryStore({ namespaces: [NS] })
    for (const entry of classes) {
      if (entry === "next second") yield* TestClock.adjust("1 second")
      else yield* store.create(IngressClassResource, undefined, entry)
    }
    return store
  })

const classOf = (object: Ingress): string | undefined => object.spec?.ingressClassName

describe("the default IngressClass on create", () => {
  it.effect("gives an Ingress that names no class the class annotated default", () =>
    Effect.gen(function*() {
      const store = yield* storeWith([ingressClassFor({ className: "nginx" }), defaultClass("local")])
      const created = yield* store.create(IngressResource, NS, ingress("web"))
      expect(classOf(created)).toBe("local")
      expect(classOf(yield* store.get(IngressResource, NS, "web"))).toBe("local")
      // Set after the request's fields were recorded: the creator does not own it.
      expect(created.metadata?.managedFields?.length).toBe(1)
      expect(JSON.stringify(created.metadata?.managedFields)).not.toContain("ingressClassName")
    }))

  it.effect("leaves alone an Ingress that names a class, in the spec or in the legacy annotation", () =>
    Effect.gen(function*() {
      const store = yield* storeWith([defaultClass("local")])
      const named = yield* store.create(IngressResource, NS, ingress("named", { className: "nginx" }))
      const legacy = ingress("legacy")
      const annotated = yield* store.create(IngressResource, NS, {
        ...legacy,
        metadata: { ...legacy.metadata, annotations: { "kubernetes.io/ingress.class": "nginx" } }
      })
      expect([classOf(named), classOf(annotated)]).toEqual(["nginx", undefined])
    }))

  it.effect("names no class when none is annotated \"true\"", () =>
    Effect.gen(function*() {
      const notDefault: IngressClass = {
        ...ingressClassFor({ className: "other" }),
        metadata: { name: "other", annotations: { [DEFAULT]: "false" } }
      }
      const store = yield* storeWith([ingressClassFor({ className: "local" }), notDefault])
      expect(classOf(yield* store.create(IngressResource, NS, ingress("web")))).toBeUndefined()
      // No IngressClass at all: nothing to choose from.
      const empty = yield* makeMemoryStore({ namespaces: [NS] })
      expect(classOf(yield* empty.create(IngressResource, NS, ingress("web")))).toBeUndefined()
    }))

  it.effect("of several defaults picks the newest by creationTimestamp, the first by name among equals", () =>
    Effect.gen(function*() {
      // As the plugin sorts them; a real server keeps creationTimestamp to the second, as LocalCluster does.
      const store = yield* storeWith([
        defaultClass("a-oldest"),
        "next second",
        defaultClass("zz-newest"),
        defaultClass("mm-newest"),
        "next second",
        ingressClassFor({ className: "not-default" })
      ])
      expect(classOf(yield* store.create(IngressResource, NS, ingress("web")))).toBe("mm-newest")
    }))

  it.effect("applies to an apply that creates, and stays when a later apply leaves the class out", () =>
    Effect.gen(function*() {
      const store = yield* storeWith([defaultClass("local")])
      const config = ingress("web")
      const created = yield* store.apply(IngressResource, NS, "web", config, { fieldManager: "runner" })
      expect(classOf(created.object)).toBe("local")
      // The class is nobody's: the applier did not send it, so it owns no f:ingressClassName...
      expect(JSON.stringify(created.object.metadata?.managedFields)).not.toContain("ingressClassName")
      // ...and applying the same configuration again neither removes it nor changes anything.
      const again = yield* store.apply(IngressResource, NS, "web", config, { fieldManager: "runner" })
      expect(classOf(again.object)).toBe("local")
      expect(again.object.metadata?.resourceVersion).toBe(created.object.metadata?.resourceVersion)
    }))

  it.effect("applies on create only: an update that clears the class leaves it cleared", () =>
    Effect.gen(function*() {
      const store = yield* storeWith([defaultClass("local")])
      const created = yield* store.create(IngressResource, NS, ingress("web"))
      const { ingressClassName: _, ...spec } = created.spec ?? {}
      const updated = yield* store.replace(IngressResource, NS, "web", { ...created, spec })
      expect(classOf(updated.object)).toBeUndefined()
    }))

  it.effect("leaves a dry run's Ingress defaulted too, and the store without it", () =>
    Effect.gen(function*() {
      const store = yield* storeWith([defaultClass("local")])
      const dry = yield* store.create(IngressResource, NS, ingress("web"), { dryRun: true })
      expect(classOf(dry)).toBe("local")
      expect((yield* store.list(IngressResource, NS)).items).toEqual([])
    }))
})

describe("the default IngressClass over HTTP", () => {
  it.live("is filled into an Ingress POSTed with no class", () =>
    Effect.scoped(Effect.gen(function*() {
      const cluster = yield* LocalCluster.make({ namespaces: [NS] })
      expect(
        (yield* send(cluster.url, "POST", "/apis/networking.k8s.io/v1/ingressclasses", defaultClass("local"))).status
      )
        .toBe(201)
      const answer = yield* send(
        cluster.url,
        "POST",
        `/apis/networking.k8s.io/v1/namespaces/${NS}/ingresses`,
        ingress("web")
      )
      expect({ status: answer.status, className: answer.body?.spec?.ingressClassName }).toEqual({
        status: 201,
        className: "local"
      })
    })))
})
