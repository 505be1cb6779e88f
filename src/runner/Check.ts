/**
 * `checkRouting`: whether this configuration can route sessions on this cluster, as a
 * list of checks in the order a person would fix them (the server, its APIs, the
 * namespace, permissions, the IngressClass or Gateway, admission, and optionally a
 * probe session's round trip). Each check passes, fails, or warns that it could not tell.
 */
import { Clock, Effect, Either, Stream } from "effect"
import { CONTROLLER_NAME } from "../domain/ControllerManifest.js"
import { causeReason } from "../domain/Diagnosis.js"
import { buildSessionObjects, sessionSelector, type SessionSpec } from "../domain/Manifests.js"
import type { HttpRoute, Ingress, KubeObject, Service } from "../domain/Objects.js"
import { controllerNeeds, featureNeeds, routingNeeds } from "../domain/Requirements.js"
import { HttpRouteResource, IngressResource, NamespaceResource, ServiceResource } from "../domain/Resources.js"
import { hostForPort } from "../domain/Routes.js"
import { KubeClient } from "../services/KubeClient.js"
import type { KubeError } from "../services/KubeError.js"
import { manifestSettingsOf, RouterConfig } from "../services/RouterConfig.js"
import { RouteStatusSource } from "../services/RouteStatusSource.js"
import { SessionRouter } from "../services/SessionRouter.js"
import type { SessionRouting } from "../services/SessionRouting.js"
import { apiCheck, permissionChecks, serverCheck } from "./internal/ApiServerChecks.js"
import { result } from "./internal/CheckResults.js"
import { publishSession, type SessionEvent, unpublishSession } from "./SessionRunner.js"

/**
 * ✓, ✗ or !: passed, failed, or could not tell (not a failure).
 *
 * @since 0.1.0
 * @category models
 */
export type CheckStatus = "ok" | "fail" | "warn"

/**
 * One check: a stable id, one line, and on failure or warning what to do.
 *
 * @since 0.1.0
 * @category models
 */
export interface CheckResult {
  readonly id: string
  readonly status: CheckStatus
  readonly line: string
  readonly hint?: string
}

/**
 * Every check run; `ok` when none failed.
 *
 * @since 0.1.0
 * @category models
 */
export interface CheckReport {
  readonly checks: ReadonlyArray<CheckResult>
  readonly ok: boolean
}

/** The Pod that owns the probe session's objects. */
export interface ProbeOwner {
  readonly podName: string
  readonly podUid: string
}

/**
 * What `checkRouting` checks beyond the configuration it reads.
 *
 * @since 0.1.0
 * @category models
 */
export interface CheckOptions {
  /** Also publish a probe session, watch it to a verdict and unpublish it. */
  readonly roundTrip?: boolean
  /**
   * A running Pod to own the probe's objects. Without one they name a Pod that does
   * not exist, which a cluster's garbage collector deletes them for, often before a
   * controller programs them.
   */
  readonly probeOwner?: ProbeOwner
  /**
   * Check for controller mode: also ask for what it does beyond routing (the Pods, their
   * status, the Lease), and name its Role (`session-routing-controller`) in the grants.
   */
  readonly controller?: boolean
}

/** The probe session's id: the dry run and the round trip use it. */
export const PROBE_SESSION_ID = "routing-check"
const PROBE_PORT = 8080
/** The probe session, owned by `owner` or else by a placeholder Pod (the dry run stores nothing). */
const probeSpec = (owner: ProbeOwner | undefined): SessionSpec => ({
  sessionId: PROBE_SESSION_ID,
  podName: owner?.podName ?? `session-routing-${PROBE_SESSION_ID}`,
  podUid: owner?.podUid ?? "00000000-0000-0000-0000-000000000000",
  ports: [{ port: PROBE_PORT, protocol: "tcp" }]
})

/** Makes a report from its checks. */
export const reportOf = (checks: ReadonlyArray<CheckResult>): CheckReport => ({
  checks,
  ok: checks.every((c) => c.status !== "fail")
})

/** The report of a configuration that routes nothing: one warning, no failure. */
export const nothingToCheck = (config: RouterConfig.Service): CheckReport =>
  reportOf([
    result(
      "mode",
      "warn",
      `nothing to check: ${
        config.mode === "none" ? "mode none publishes nothing" : "no base domain is set, so nothing is published"
      }`,
      "set SESSION_ROUTING_MODE and SESSION_ROUTING_BASE_DOMAIN to the values the runner uses"
    )
  ])

/**
 * Runs the checks for the configuration in context. The first failure that makes the
 * rest meaningless (no server) ends the list; every other check runs whatever came before.
 *
 * @since 0.1.0
 * @category programs
 */
export const checkRouting = (
  options: CheckOptions = {}
): Effect.Effect<CheckReport, never, KubeClient | RouterConfig | SessionRouting> =>
  Effect.gen(function*() {
    const config = yield* RouterConfig
    const kube = yield* KubeClient
    const router = yield* SessionRouter
    const source = yield* RouteStatusSource
    const settings = manifestSettingsOf(config)
    if (router.layer === "none" || settings === undefined) return nothingToCheck(config)
    const mode = router.layer
    const queries = kube.cluster
    const checks: Array<CheckResult> = []

    const server = yield* serverCheck(queries)
    checks.push(server)
    if (server.status === "fail") return reportOf(checks)

    const needsSettings = {
      sessionNamespace: config.sessionNamespace,
      ...(config.gateway !== undefined ? { gatewayNamespace: config.gateway.namespace } : {}),
      watch: config.statusSource === "watch",
      events: config.events !== false,
      probe: config.routeProbe !== undefined
    }
    const needs = routingNeeds(mode, needsSettings)
    // A subresource need (the Pod's finalizers) rides on a core type every server serves.
    checks.push(yield* apiCheck(queries, needs.filter((need) => need.subresource === undefined), mode))
    checks.push(yield* namespaceCheck(kube, config.sessionNamespace))
    const controller = options.controller === true
    checks.push(
      ...(yield* permissionChecks(
        queries,
        [...needs, ...(controller ? controllerNeeds(config.sessionNamespace) : []), ...featureNeeds(needsSettings)],
        controller ? CONTROLLER_NAME : undefined
      ))
    )

    const host = hostForPort(settings.baseDomain, PROBE_SESSION_ID, PROBE_PORT)
    checks.push(yield* pathCheck(source, mode, host))
    checks.push(
      yield* dryRunCheck(
        kube,
        config.sessionNamespace,
        buildSessionObjects(mode, settings, probeSpec(options.probeOwner))
      )
    )
    if (options.roundTrip === true) {
      checks.push(yield* roundTripCheck(probeSpec(options.probeOwner), options.probeOwner !== undefined))
    }
    return reportOf(checks)
  })

const createNamespaceHint = (namespace: string): string =>
  `create it (kubectl create namespace ${namespace}), or set RUNNER_SESSION_NAMESPACE / -n to the runner's namespace`

const namespaceCheck = (kube: KubeClient.Service, namespace: string): Effect.Effect<CheckResult> =>
  kube.get(NamespaceResource, "", namespace).pipe(
    Effect.map(() => result("namespace", "ok", `namespace "${namespace}" exists`)),
    Effect.catchAll((error) =>
      Effect.succeed(
        error._tag === "NotFound"
          ? result(
            "namespace",
            "fail",
            `namespace "${namespace}" does not exist`,
            createNamespaceHint(namespace)
          )
          : result("namespace", "warn", `could not read namespace "${namespace}": ${error.reason}`)
      )
    )
  )

const pathCheck = (
  source: RouteStatusSource.Service,
  mode: "ingress" | "gateway",
  host: string
): Effect.Effect<CheckResult> =>
  Effect.gen(function*() {
    const id = mode === "ingress" ? "ingress-class" : "gateway"
    if (source.diagnose === undefined) {
      return result(id, "warn", "this routing layer cannot say what its routing depends on")
    }
    const pathOf = yield* source.diagnose(PROBE_SESSION_ID)
    const path = pathOf({ host, port: PROBE_PORT })
    switch (path._tag) {
      case "Sound":
        return result(id, "ok", path.summary)
      case "Broken":
        return result(id, "fail", causeReason(path.cause))
      case "Unread":
        return result(id, "warn", `could not read ${path.what}: ${path.reason}`)
    }
  })

/** A dry-run apply of one of the session's objects, by its kind. */
const dryApply = (kube: KubeClient.Service, object: KubeObject): Effect.Effect<void, KubeError> => {
  const options = { dryRun: true }
  switch (object.kind) {
    case ServiceResource.kind:
      return Effect.asVoid(kube.apply(ServiceResource, object as Service, options))
    case IngressResource.kind:
      return Effect.asVoid(kube.apply(IngressResource, object as Ingress, options))
    case HttpRouteResource.kind:
      return Effect.asVoid(kube.apply(HttpRouteResource, object as HttpRoute, options))
    default:
      return Effect.void
  }
}

/**
 * A dry run of the sample session. Its objects are namespaced types the server serves (the
 * API check saw to that), so a NotFound on applying them can only be their namespace.
 */
const dryRunCheck = (
  kube: KubeClient.Service,
  namespace: string,
  objects: ReadonlyArray<KubeObject>
): Effect.Effect<CheckResult> =>
  Effect.forEach(objects, (object) => dryApply(kube, object), { discard: true }).pipe(
    Effect.map(() =>
      result(
        "dry-run",
        "ok",
        `the API server admits a sample session's ${objects.map((o) => o.kind).join(" and ")} (dry run, nothing stored)`
      )
    ),
    Effect.catchAll((error) =>
      Effect.succeed(
        result(
          "dry-run",
          "fail",
          `the API server refuses a sample session's objects (dry run): ${error.reason}`,
          error._tag === "NotFound"
            ? `namespace "${namespace}" does not exist: ${createNamespaceHint(namespace)}`
            : "an admission webhook or policy refuses them, or a permission above is missing: the reason names it"
        )
      )
    )
  )

/** Publishes the probe session, waits for its verdict, and always unpublishes it. */
const roundTripCheck = (
  spec: SessionSpec,
  owned: boolean
): Effect.Effect<CheckResult, never, SessionRouting | RouterConfig> =>
  Effect.gen(function*() {
    const started = yield* Clock.currentTimeMillis
    const outcome = yield* Effect.scoped(
      Effect.gen(function*() {
        const session = yield* publishSession(spec)
        const events = yield* Stream.runCollect(session.events)
        return [...events].filter((e): e is SessionEvent & { readonly type: "route" } =>
          e.type === "route" && e.state !== "pending"
        )
      })
    ).pipe(Effect.either)
    const removed = yield* Effect.either(unpublishSession(PROBE_SESSION_ID))
    const took = (yield* Clock.currentTimeMillis) - started
    if (Either.isLeft(removed)) {
      return result(
        "round-trip",
        "fail",
        `could not unpublish probe session ${PROBE_SESSION_ID}: ${removed.left.message}`,
        `remove its objects by hand: kubectl delete service,ingress,httproute -l ${sessionSelector(PROBE_SESSION_ID)}`
      )
    }
    if (Either.isLeft(outcome)) {
      return result(
        "round-trip",
        "fail",
        `could not publish probe session ${PROBE_SESSION_ID}: ${outcome.left.message}`
      )
    }
    const failed = outcome.right.find((e) => e.state === "unprogrammed")
    if (failed !== undefined) {
      return result(
        "round-trip",
        "fail",
        `probe host ${failed.host} ended unprogrammed: ${failed.reason ?? ""}`,
        owned
          ? undefined
          : "if the cluster's garbage collector removed the probe's objects (their owner Pod does not exist), name a running Pod with --pod and --pod-uid"
      )
    }
    return result(
      "round-trip",
      "ok",
      `probe session ${PROBE_SESSION_ID} published, programmed and unpublished in ${took} ms`
    )
  })
