/**
 * The RBAC manifest is enough and no more: publish --watch, follow, status, check and
 * unpublish pass as a ServiceAccount bound only to it, over HTTPS against LocalCluster
 * with RBAC on; and taking any one verb out of any rule makes a named step fail, or
 * report, with the 403 that names that verb and resource.
 */
import { describe, expect, it } from "@effect/vitest"
import { Credential, SessionCluster } from "@session-routing/local-cluster"
import { Cause, Duration, Effect, Layer, Logger, Stream } from "effect"
import type { KubeObject, PolicyRule, Role } from "../../src/domain/Objects.js"
import { RBAC_NAME, rbacManifest, type RbacSettings } from "../../src/domain/RbacManifest.js"
import {
  allResources,
  ClusterRoleResource,
  HttpRouteResource,
  IngressResource,
  type ResourceType,
  RoleResource,
  ServiceResource
} from "../../src/domain/Resources.js"
import * as SessionRouting from "../../src/layers/SessionRouting.js"
import { checkRouting } from "../../src/runner/Check.js"
import { followSession } from "../../src/runner/FollowSession.js"
import { publishSession, sessionStatus, unpublishSession } from "../../src/runner/SessionRunner.js"
import { BASE_DOMAIN, routerConfigLayer, type TestConfig } from "../support/RouterHarness.js"
import { liveClientAs } from "../support/SecuredCluster.js"

const NS = "telo-sessions"
const settingsOf = (mode: "ingress" | "gateway"): RbacSettings => ({
  mode,
  sessionNamespace: NS,
  gateway: { name: "sessions", namespace: NS },
  statusSource: "watch"
})

const spec = (sessionId: string) => ({
  sessionId,
  podName: `telo-run-${sessionId}`,
  podUid: "0b7e6a52-1111-4222-8333-444455556666",
  // Two hosts: the second RouteProgrammed repeats the first's reason, which the Event
  // recorder counts by patching the Event, so the journey needs every Events verb.
  ports: [{ port: 8080, protocol: "tcp" as const }, { port: 9090, protocol: "tcp" as const }]
})

/** What one step said: its failure, the read errors and warnings it reported, or nothing. */
interface Said {
  readonly step: string
  readonly ok: boolean
  readonly text: string
}

const resourceOf = (object: KubeObject) =>
  allResources.find((r) =>
    (r.group === "" ? "v1" : `${r.group}/${r.version}`) === object.apiVersion && r.kind === object.kind
  ) as ResourceType<
    KubeObject
  >

/** A cluster with RBAC on, the manifest's objects written by the admin. */
const securedCluster = (manifest: ReadonlyArray<KubeObject>) =>
  Effect.gen(function*() {
    const sc = yield* Effect.orDie(SessionCluster.make({
      baseDomain: BASE_DOMAIN,
      dataPlane: false,
      auth: { rbac: true },
      ingress: { delay: Duration.millis(20) },
      gateway: { delay: Duration.millis(20) }
    }))
    for (const object of manifest) {
      yield* Effect.orDie(sc.cluster.store.create(resourceOf(object), object.metadata?.namespace, object))
    }
    return sc
  })

/** The session objects a step left, removed as the admin would, so the next run starts from none. */
const clearSessions = (sc: SessionCluster.SessionCluster) =>
  Effect.forEach(
    [ServiceResource, IngressResource, HttpRouteResource] as ReadonlyArray<ResourceType<KubeObject>>,
    (resource) =>
      Effect.flatMap(Effect.orDie(sc.cluster.store.list(resource, NS)), (list) =>
        Effect.forEach(list.items, (item) =>
          Effect.ignore(sc.cluster.store.delete(resource, NS, item.metadata?.name ?? "")))),
    {
      discard: true
    }
  )

/**
 * Every step a runner takes, as the manifest's ServiceAccount, in `mode`: publish and
 * watch to a verdict, publish again, follow, status, check, unpublish, and a session no controller
 * programs (a class nobody serves, a listener the Gateway lacks), so the diagnosis reads what it reads. Returns what each step said.
 */
const journey = (sc: SessionCluster.SessionCluster, mode: "ingress" | "gateway") =>
  Effect.gen(function*() {
    const warnings: Array<string> = []
    const logger = Logger.replace(
      Logger.defaultLogger,
      Logger.make(({ message }) => {
        warnings.push([message].flat().map(String).join(" "))
      })
    )
    const layersWith = (config: TestConfig) =>
      SessionRouting.layerConfig.pipe(
        Layer.provideMerge(liveClientAs(sc.cluster, Credential.serviceAccount(NS, RBAC_NAME))),
        Layer.provideMerge(
          routerConfigLayer(sc, {
            mode,
            routePollIntervalMs: 100,
            routeReadyTimeoutMs: 1_500,
            apiTimeoutMs: 4_000,
            ...config
          })
        ),
        Layer.orDie
      )
    const said: Array<Said> = []
    const step = <A, E, R>(name: string, effect: Effect.Effect<A, E, R>, describe: (a: A) => string = () => "") =>
      Effect.gen(function*() {
        warnings.length = 0
        const exit = yield* Effect.exit(effect)
        const text = exit._tag === "Success" ? describe(exit.value) : Cause.pretty(exit.cause)
        said.push({ step: name, ok: exit._tag === "Success", text: [text, ...warnings].join("\n") })
      })
    const events = (sessionId: string) =>
      Effect.scoped(Effect.flatMap(publishSession(spec(sessionId)), (s) => Stream.runCollect(s.events))).pipe(
        Effect.map((all) => JSON.stringify([...all]))
      )
    yield* Effect.gen(function*() {
      yield* step("publish --watch", events("s1"), (text) => text)
      // A reload: every object exists, and is read to make sure it is the session's own.
      yield* step("publish again", events("s1"), (text) => text)
      yield* step(
        "follow",
        Stream.runCollect(
          followSession("s1", [{ host: `8080-s1.${BASE_DOMAIN}`, port: 8080, state: "programmed" }]).pipe(
            Stream.interruptAfter(Duration.millis(300))
          )
        ),
        (all) => JSON.stringify([...all])
      )
      yield* step("status", sessionStatus("s1"), (all) => JSON.stringify(all))
      yield* step("check", checkRouting(), (report) => JSON.stringify(report))
      yield* step("unpublish", unpublishSession("s1"))
    }).pipe(Effect.scoped, Effect.provide(layersWith({})), Effect.provide(logger))
    yield* step(
      "an unclaimed session's diagnosis",
      Effect.zipLeft(events("s2"), unpublishSession("s2")),
      (text) => text
    ).pipe(
      Effect.provide(
        layersWith(mode === "ingress" ? { ingressClassName: "nginx" } : { gatewaySection: "no-such-listener" })
      ),
      Effect.provide(logger)
    )
    yield* clearSessions(sc)
    return said
  })

const forbidden = (said: ReadonlyArray<Said>) => said.filter((s) => /forbidden|cannot \w+ resource/.test(s.text))

/** Each verb of each rule of the manifest's roles, with the manifest that lacks only it. */
const withoutEachVerb = (manifest: ReadonlyArray<KubeObject>) =>
  manifest.flatMap((object, o) =>
    object.kind !== "Role" && object.kind !== "ClusterRole"
      ? []
      : ((object as Role).rules ?? []).flatMap((rule, r) =>
        rule.verbs.map((verb) => {
          const rules = ((object as Role).rules ?? []).flatMap((other, i): ReadonlyArray<PolicyRule> => {
            if (i !== r) return [other]
            const verbs = other.verbs.filter((v) => v !== verb)
            return verbs.length === 0 ? [] : [{ ...other, verbs }]
          })
          const reduced = manifest.map((m, i) => (i === o ? { ...(m as Role), rules } : m))
          return { verb, resource: rule.resources![0]!, role: object.kind, reduced, roleIndex: o }
        })
      )
  )

describe("least privilege", () => {
  for (const mode of ["ingress", "gateway"] as const) {
    it.live(
      `lets a ServiceAccount bound only to the ${mode} manifest publish, follow, read, check and unpublish`,
      () =>
        Effect.scoped(Effect.gen(function*() {
          const sc = yield* securedCluster(rbacManifest(settingsOf(mode)))
          const said = yield* journey(sc, mode)
          expect(said.filter((s) => !s.ok)).toEqual([])
          expect(forbidden(said)).toEqual([])
          expect(said[0]!.text).toContain("\"state\":\"programmed\"")
        })),
      60_000
    )

    it.live(
      `needs every verb of the ${mode} manifest: without any one, a named step meets the 403 naming it`,
      () =>
        Effect.scoped(Effect.gen(function*() {
          const manifest = rbacManifest(settingsOf(mode))
          const sc = yield* securedCluster(manifest)
          const rows: Array<{ readonly rule: string; readonly refusedIn: ReadonlyArray<string> }> = []
          for (const row of withoutEachVerb(manifest)) {
            const role = row.reduced[row.roleIndex] as Role
            const resource = row.role === "Role" ? RoleResource : ClusterRoleResource
            yield* Effect.orDie(
              Effect.flatMap(sc.cluster.store.get(resource, role.metadata?.namespace, role.metadata!.name!), (live) =>
                sc.cluster.store.replace(resource, role.metadata?.namespace, role.metadata!.name!, {
                  ...live,
                  rules: role.rules ?? []
                }))
            )
            const said = yield* journey(sc, mode)
            // The server's 403 as a step reports it, or check's reading of its access review
            // (`may not get gatewayclasses...`), the one place a best-effort read is named.
            const refusal = new RegExp(
              `cannot ${row.verb} resource \\\\?"${row.resource}\\\\?"|may not (\\w+, )*${row.verb}\\b[\\w, ]* ${row.resource}\\b`
            )
            rows.push({
              rule: `${row.verb} ${row.resource}`,
              refusedIn: said.filter((s) =>
                refusal.test(s.text)
              ).map((s) => s.step)
            })
          }
          expect(rows.filter((r) => r.refusedIn.length === 0)).toEqual([])
        })),
      240_000
    )
  }
})
