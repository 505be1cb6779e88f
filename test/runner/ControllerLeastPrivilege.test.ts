/**
 * The controller's manifest is enough and its own verbs are each needed: over HTTPS
 * against LocalCluster with RBAC on, a controller running as the ServiceAccount bound
 * only to what `render --controller` grants takes the Lease, routes a labelled Pod,
 * writes its label, annotation and condition, renews and reapplies with no request
 * refused that it needs; and with any one of the controller's verbs taken out of its Role, the API
 * server refuses a request of that verb on that resource. (The runner's own verbs are
 * proved needed by LeastPrivilege.test.ts.)
 */
import { describe, expect, it } from "@effect/vitest"
import { Credential, SessionCluster } from "@session-routing/local-cluster"
import { Duration, Effect, Layer } from "effect"
import { CONTROLLER_NAME, controllerManifest } from "../../src/domain/ControllerManifest.js"
import { LABEL_SESSION_ID } from "../../src/domain/Manifests.js"
import type { KubeObject, Pod, PolicyRule, Role } from "../../src/domain/Objects.js"
import { ENDPOINTS_ANNOTATION, ROUTES_CONDITION, SESSION_LABEL } from "../../src/domain/PodRouting.js"
import { controllerRules } from "../../src/domain/RbacManifest.js"
import { allResources, LeaseResource, PodResource, type ResourceType } from "../../src/domain/Resources.js"
import * as SessionRouting from "../../src/layers/SessionRouting.js"
import { runController } from "../../src/runner/Controller.js"
import { BASE_DOMAIN, eventually, routerConfigLayer } from "../support/RouterHarness.js"
import { liveClientAs } from "../support/SecuredCluster.js"

const NS = "telo-sessions"
const IDENTITY = "session-routing-controller-0"

const resourceOf = (object: KubeObject) =>
  allResources.find((r) =>
    (r.group === "" ? "v1" : `${r.group}/${r.version}`) === object.apiVersion && r.kind === object.kind
  ) as ResourceType<KubeObject>

/** The RBAC objects `render --controller` prints for ingress mode in NS (LocalCluster serves no Deployments). */
const manifest = controllerManifest({
  mode: "ingress",
  sessionNamespace: NS,
  statusSource: "watch",
  image: "x",
  env: []
})
  .filter((object) => object.kind !== "Deployment")
const roleIndex = manifest.findIndex((object) => object.kind === "Role")

/** What the metrics call each RBAC verb: the request's verb as kube-apiserver labels it. */
const REQUEST_VERB = {
  get: "GET",
  list: "LIST",
  watch: "WATCH",
  patch: "PATCH",
  create: "POST",
  update: "PUT"
} as const

/** A cluster with RBAC on holding `objects`, and the controller running as its ServiceAccount until the scope ends. */
const controllerAs = (objects: ReadonlyArray<KubeObject>) =>
  Effect.gen(function*() {
    const sc = yield* Effect.orDie(SessionCluster.make({
      baseDomain: BASE_DOMAIN,
      dataPlane: false,
      auth: { rbac: true },
      ingress: { delay: Duration.millis(20) }
    }))
    for (const object of objects) {
      yield* Effect.orDie(sc.cluster.store.create(resourceOf(object), object.metadata?.namespace, object))
    }
    const layer = SessionRouting.layerConfig.pipe(
      Layer.provideMerge(liveClientAs(sc.cluster, Credential.serviceAccount(NS, CONTROLLER_NAME))),
      Layer.provideMerge(routerConfigLayer(sc, { mode: "ingress", routeReadyTimeoutMs: 1_500, apiTimeoutMs: 4_000 })),
      Layer.orDie
    )
    yield* Effect.forkScoped(Effect.provide(
      runController({
        // Short, so a renewal (update) and a reapply (get) happen within the test.
        resync: Duration.millis(300),
        leaderElection: {
          identity: IDENTITY,
          leaseDuration: "2 seconds",
          renewDeadline: "1 second",
          retryPeriod: "200 millis"
        }
      }),
      layer
    ))
    const pod: Pod = {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "alpha-pod", labels: { [SESSION_LABEL]: "alpha" } },
      spec: { containers: [{ name: "session", image: "registry.example/session:1", ports: [{ containerPort: 8080 }] }] }
    }
    yield* Effect.orDie(sc.cluster.store.create(PodResource, NS, pod))
    return sc
  })

/** Every verb of the controller's own rules, with the manifest whose Role lacks only it. */
const withoutEachVerb = controllerRules.flatMap((own) =>
  own.verbs.map((verb) => {
    const role = manifest[roleIndex] as Role
    const rules = (role.rules ?? []).flatMap((rule): ReadonlyArray<PolicyRule> => {
      if (rule !== own && JSON.stringify(rule) !== JSON.stringify(own)) return [rule]
      const verbs = rule.verbs.filter((v) => v !== verb)
      return verbs.length === 0 ? [] : [{ ...rule, verbs }]
    })
    const [resource = "", subresource = ""] = own.resources![0]!.split("/")
    return {
      verb,
      resource,
      subresource,
      group: own.apiGroups![0]!,
      objects: manifest.map((object, i) => (i === roleIndex ? { ...role, rules } : object))
    }
  })
)

describe("the controller's least privilege", () => {
  it.scopedLive(
    "lets the controller lead, route a Pod, renew and reapply as a ServiceAccount bound only to its manifest",
    () =>
      Effect.gen(function*() {
        const sc = yield* controllerAs(manifest)
        const pod = yield* eventually(
          Effect.orDie(sc.cluster.store.get(PodResource, NS, "alpha-pod")),
          (p) =>
            p.status?.conditions?.find((c) => c.type === ROUTES_CONDITION)?.status === "True" &&
            p.metadata?.annotations?.[ENDPOINTS_ANNOTATION] !== undefined
        )
        expect(pod.metadata?.labels?.[LABEL_SESSION_ID]).toBe("alpha")
        const lease = yield* Effect.orDie(sc.cluster.store.get(LeaseResource, NS, CONTROLLER_NAME))
        expect(lease.spec?.holderIdentity).toBe(IDENTITY)
        // A renewal and a reapply each went through once: every verb of the Role was used.
        yield* sc.cluster.metrics.waitFor((s) =>
          s.requests.some((r) => r.verb === "PUT" && r.resource === "leases" && r.code === 200) &&
            s.requests.some((r) => r.verb === "GET" && r.resource === "pods" && r.subresource === "" && r.code === 200)
            ? true
            : undefined
        ).pipe(Effect.timeoutFail({ duration: "5 seconds", onTimeout: () => "no renewal or reapply within 5 s" }))
        // The one refusal is by design: a publish also looks for the other mode's objects to
        // remove (left by a switch of mode), best effort, and takes a 403 there as none.
        expect(
          (yield* sc.cluster.metrics.requests).filter((r) => r.code === 403).map((r) => `${r.verb} ${r.resource}`)
        ).toEqual(["LIST httproutes"])
      }),
    30_000
  )

  it.scopedLive(
    "needs each of the controller's own verbs: without any one, the server refuses a request of it",
    () =>
      Effect.gen(function*() {
        const rows: Array<{ readonly rule: string; readonly refused: boolean }> = []
        for (const row of withoutEachVerb) {
          const refused = yield* Effect.scoped(Effect.gen(function*() {
            const sc = yield* controllerAs(row.objects)
            return yield* sc.cluster.metrics.waitFor((s) =>
              s.requests.some((r) =>
                  r.code === 403 && r.verb === REQUEST_VERB[row.verb as keyof typeof REQUEST_VERB] &&
                  r.group === row.group && r.resource === row.resource && r.subresource === row.subresource
                )
                ? true
                : undefined
            ).pipe(Effect.timeoutTo({ duration: "6 seconds", onSuccess: () => true, onTimeout: () => false }))
          }))
          rows.push({
            rule: `${row.verb} ${row.resource}${row.subresource === "" ? "" : `/${row.subresource}`}`,
            refused
          })
        }
        expect(rows.map((r) => r.rule)).toEqual([
          "get pods",
          "list pods",
          "patch pods",
          "watch pods",
          "patch pods/status",
          "create leases",
          "get leases",
          "list leases",
          "update leases"
        ])
        expect(rows.filter((r) => !r.refused)).toEqual([])
      }),
    120_000
  )
})
