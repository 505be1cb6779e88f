/**
 * `session-routing demo`, the main job: the whole story on LocalCluster with no real
 * cluster. It publishes sessions through the live client over HTTP (the code
 * `publish --watch` runs), shows each host go pending → programmed, fetches the
 * workload through the data plane by Host header, then shows the failure the tool
 * exists to catch: a route no controller claims, reported unprogrammed with why.
 */
import { Command, Options } from "@effect/cli"
import * as FileSystem from "@effect/platform/FileSystem"
import * as Path from "@effect/platform/Path"
import type { DataPlane, SessionCluster } from "@session-routing/local-cluster"
import { Clock, Console, Duration, Effect, Layer, Option, Schedule } from "effect"
import * as Http from "node:http"
import type { IngressClass, Pod } from "../../domain/Objects.js"
import { ROUTES_CONDITION, SESSION_LABEL } from "../../domain/PodRouting.js"
import {
  apiVersionOf,
  GatewayClassResource,
  GatewayResource,
  IngressClassResource,
  PodResource
} from "../../domain/Resources.js"
import * as RouterConfigLive from "../../layers/RouterConfigLive.js"
import * as SessionRouting from "../../layers/SessionRouting.js"
import { runController } from "../../runner/Controller.js"
import { publishSession, unpublishSession } from "../../runner/SessionRunner.js"
import { RouterConfig } from "../../services/RouterConfig.js"
import { cliError } from "../CliError.js"
import { kubeClientLayer, sessionLayer } from "../GlobalOptions.js"
import {
  DEMO_TIMING,
  type DemoMode,
  type Scenario,
  scenariosFor,
  UNSERVED_GATEWAY,
  UNSERVED_INGRESS_CLASS
} from "../internal/DemoScenarios.js"
import { listen, podEvents, startSessionPod, workloadAnswer } from "../internal/DemoWorkload.js"
import type { CommandHelp } from "../internal/Help.js"
import { asCliError, type Presentation, presentationFor, presentWatch } from "../present/Presenter.js"
import type { HostRow } from "../present/SessionView.js"
import { loadSessionCluster } from "./Cluster.js"
import { reportLine } from "./Controller.js"

/** The routing layers the demo can show. */
export type { DemoMode }

/** `--mode`: one layer, or (absent) ingress then gateway. */
export const demoModes = (flag: Option.Option<DemoMode>): ReadonlyArray<DemoMode> =>
  Option.match(flag, { onNone: () => ["ingress", "gateway"], onSome: (mode) => [mode] })

/** What the workload answers; the test and the demo's own check expect exactly this. */
export { workloadAnswer }

// ---------------------------------------------------------------------------
// The cluster's extra objects, the workload, and requests through the data plane
// ---------------------------------------------------------------------------

/**
 * The objects of the failure: an IngressClass and a Gateway (with its GatewayClass)
 * whose controllers are not running, which is how the silent 404 looks in a real
 * cluster (the class was installed, the controller is gone or never watched).
 */
const seedUnservedClasses = (sc: SessionCluster.SessionCluster) =>
  Effect.gen(function*() {
    const SessionCluster = yield* loadSessionCluster("demo")
    const store = sc.cluster.store
    const ingressClass: IngressClass = {
      apiVersion: apiVersionOf(IngressClassResource),
      kind: IngressClassResource.kind,
      metadata: { name: UNSERVED_INGRESS_CLASS },
      spec: { controller: "k8s.io/ingress-nginx" }
    }
    yield* SessionCluster.seed(store, IngressClassResource, undefined, ingressClass)
    yield* SessionCluster.seed(
      store,
      GatewayClassResource,
      undefined,
      SessionCluster.gatewayClassFor(UNSERVED_GATEWAY, "example.com/external-gateway")
    )
    yield* SessionCluster.seed(
      store,
      GatewayResource,
      sc.namespace,
      SessionCluster.gatewayFor({
        name: UNSERVED_GATEWAY,
        namespace: sc.namespace,
        className: UNSERVED_GATEWAY,
        hostname: `*.${sc.baseDomain}`,
        allowedRoutes: "Same"
      })
    )
  })

/** An answer through the data plane. */
export interface Answer {
  readonly status: number
  readonly body: string
}

/**
 * `GET /` to the data plane with `host` in the Host header: what a browser asking for
 * `http://<host>/` sends once DNS points it at the proxy. A fresh connection each time
 * (no agent), so nothing is left open when the data plane stops.
 */
export const requestThrough = (dataPlane: DataPlane, host: string): Effect.Effect<Answer, string> =>
  Effect.tryPromise({
    try: (signal) =>
      new Promise<Answer>((resolve, reject) => {
        const req = Http.request(
          { host: dataPlane.host, port: dataPlane.port, path: "/", headers: { host }, agent: false, signal },
          (res) => {
            let body = ""
            res.setEncoding("utf8")
            res.on("data", (chunk: string) => (body += chunk))
            res.on("end", () => resolve({ status: res.statusCode ?? 0, body: body.trim() }))
            res.on("error", reject)
          }
        )
        req.on("error", reject)
        req.end()
      }),
    catch: (cause) =>
      `the request for ${host} through the data plane failed: ${cause instanceof Error ? cause.message : String(cause)}`
  }).pipe(
    Effect.timeoutFail({
      duration: Duration.seconds(5),
      onTimeout: () => `the data plane did not answer for ${host} within 5 s`
    })
  )

/** An answer as a line: the data plane's own answers already start with their status. */
export const answerLine = (answer: Answer): string =>
  answer.body.startsWith(`${answer.status} `) ? answer.body : `${answer.status} ${answer.body}`

// ---------------------------------------------------------------------------
// Running it
// ---------------------------------------------------------------------------

/** What a scenario showed, for the closing line. */
interface Outcome {
  readonly served: number
  readonly unclaimed: number
}

/** Why a scenario did not go as the demo says it does, or undefined when it did. */
export const unexpected = (
  expect: Scenario["expect"],
  rows: ReadonlyArray<HostRow>,
  answers: ReadonlyArray<{ readonly row: HostRow; readonly answer: Answer; readonly expected: string }>
): string | undefined => {
  if (rows.length === 0) return "no host was published"
  for (const row of rows) {
    const wanted = expect === "served" ? "programmed" : "unprogrammed"
    if (row.state !== wanted) {
      return `${row.host} ended ${row.state}${row.reason !== undefined ? ` (${row.reason})` : ""}, expected ${wanted}`
    }
  }
  for (const { answer, expected, row } of answers) {
    if (expect === "served" && (answer.status !== 200 || answer.body !== expected)) {
      return `${row.host} answered ${answer.status} "${answer.body}" through the data plane, expected 200 "${expected}"`
    }
    if (expect === "unclaimed" && answer.status !== 404) {
      return `${row.host} answered ${answer.status} "${answer.body}" through the data plane, expected 404`
    }
  }
  return undefined
}

/** Why the probes or the Pod's Events did not say what the demo says they do, or undefined when they did. */
export const unexpectedFollowUps = (
  expect: Scenario["expect"],
  rows: ReadonlyArray<HostRow>,
  reasons: ReadonlyArray<string>
): string | undefined => {
  const unprobed = rows.find((row) => expect === "served" && row.probe !== "200")
  if (unprobed !== undefined) return `${unprobed.host}'s probe said ${unprobed.probe ?? "nothing"}, expected 200`
  // A verdict within the publish's wait tells the publish too: RoutesPublished is not asked for.
  const wanted = expect === "served" ? "RouteProgrammed" : "RouteUnprogrammed"
  return reasons.includes(wanted) ? undefined : `the session Pod has no ${wanted} Event`
}

const runScenario = (
  sc: SessionCluster.SessionCluster & { readonly dataPlane: DataPlane },
  kubeconfigPath: string,
  presentation: Presentation,
  scenario: Scenario,
  index: number,
  count: number
) =>
  Effect.scoped(
    Effect.gen(function*() {
      yield* Console.log(`\n[${index}/${count}] ${scenario.title}`)
      for (const note of scenario.notes) yield* Console.log(`      ${note}`)
      const { local, pod } = yield* startSessionPod(sc, scenario.sessionId, scenario.ports)
      yield* Console.log(
        `      workload: Pod ${pod.name}, ${scenario.ports.length === 1 ? "port" : "ports"} ${
          scenario.ports.map((p) => p.port).join(", ")
        } on 127.0.0.1:${local} (stands in for its containers)`
      )

      const config = yield* RouterConfigLive.make(scenario.config)
      // The layers `publish` builds from its flags: the live KubeClient over HTTP from
      // the kubeconfig, RouterConfig, and the SessionRouter the configuration picks.
      // Built once for the scenario, so publish and unpublish share one client.
      const services = yield* Layer.build(
        sessionLayer({ kubeconfig: Option.some(kubeconfigPath), context: Option.none() }, config)
      ).pipe(Effect.mapError(asCliError))

      const rows: ReadonlyArray<HostRow> = yield* Effect.scoped(
        Effect.gen(function*() {
          const session = yield* publishSession({
            sessionId: scenario.sessionId,
            podName: pod.name,
            podUid: pod.uid,
            ports: scenario.ports
          })
          const view = yield* presentWatch(presentation, session.events)
          return view.rows
        })
      ).pipe(Effect.provide(services), Effect.mapError(asCliError))

      const answers = yield* Effect.forEach(rows, (row) =>
        Effect.gen(function*() {
          yield* Console.log(`      $ curl -H 'Host: ${row.host}' ${sc.dataPlane.url}/`)
          const answer = yield* requestThrough(sc.dataPlane, row.host).pipe(Effect.mapError((line) => cliError(line)))
          yield* Console.log(`      ${answerLine(answer)}`)
          return { row, answer, expected: workloadAnswer(scenario.sessionId, row.port) }
        }))

      yield* Console.log(`      $ kubectl events -n ${sc.namespace} --for pod/${pod.name}`)
      const recorded = yield* podEvents(sc, pod)
      for (const line of recorded.lines) yield* Console.log(`      ${line}`)

      yield* unpublishSession(scenario.sessionId).pipe(Effect.provide(services), Effect.mapError(asCliError))
      yield* Console.log(`      unpublished session ${scenario.sessionId}`)

      const problem = unexpected(scenario.expect, rows, answers) ??
        unexpectedFollowUps(scenario.expect, rows, recorded.events.map((e) => e.reason ?? ""))
      if (problem !== undefined) return yield* cliError(`demo: ${problem}`)
      const outcome: Outcome = scenario.expect === "served"
        ? { served: rows.length, unclaimed: 0 }
        : { served: 0, unclaimed: rows.length }
      return outcome
    })
  )

/** The session the controller scene routes, and its one port. */
const CONTROLLER_SESSION = "demo-controller"
const CONTROLLER_PORT = 8080

/** How a Pod's readiness reads, as `kubectl get pod -o wide` and its Ready condition say it. */
const readinessLine = (pod: Pod): string => {
  const ready = pod.status?.conditions?.find((c) => c.type === "Ready")
  const gate = pod.status?.conditions?.find((c) => c.type === ROUTES_CONDITION)
  const why = ready?.status === "True" ? "" : ` (${ready?.reason ?? "no Ready condition yet"})`
  return `Pod ${pod.metadata?.name}: Ready=${ready?.status ?? "Unknown"}${why}, readiness gate ${
    gate?.status === "True" ? 1 : 0
  }/1`
}

/**
 * Controller mode: a Pod labelled as a session and gated on its routes, routed by the
 * controller (over the live client, as `session-routing controller` runs it), turns
 * Ready only once its host is programmed; then its host answers.
 */
const runControllerScene = (
  sc: SessionCluster.SessionCluster & { readonly dataPlane: DataPlane },
  kubeconfigPath: string,
  index: number,
  count: number
) =>
  Effect.scoped(
    Effect.gen(function*() {
      yield* Console.log(
        `\n[${index}/${count}] controller mode: a Pod that is Ready only once its routes are programmed`
      )
      yield* Console.log(
        `      A runner in any language labels its Pod ${SESSION_LABEL}=${CONTROLLER_SESSION} and lists the condition`
      )
      yield* Console.log(`      ${ROUTES_CONDITION} in its readinessGates; session-routing controller does the rest.`)
      // Ingress mode on the cluster's own class, probes on: the condition waits for probes in a row too.
      const config = yield* RouterConfigLive.make(scenariosFor(sc, ["ingress"])[0]!.config)
      const services = yield* Layer.build(
        SessionRouting.layerConfig.pipe(
          Layer.provideMerge(kubeClientLayer({ kubeconfig: Option.some(kubeconfigPath), context: Option.none() })),
          Layer.provideMerge(Layer.succeed(RouterConfig, config))
        )
      ).pipe(Effect.mapError(asCliError))
      yield* Effect.forkScoped(
        runController({
          onReport: (report) => Console.log(`      controller: ${reportLine(report, "table").replace(/^\S+\//, "")}`)
        }).pipe(Effect.provide(services), Effect.orDie)
      )
      const name = `session-${CONTROLLER_SESSION}`
      const created = yield* sc.cluster.store.create(
        PodResource,
        sc.namespace,
        {
          apiVersion: "v1",
          kind: "Pod",
          metadata: { name, labels: { [SESSION_LABEL]: CONTROLLER_SESSION } },
          spec: {
            readinessGates: [{ conditionType: ROUTES_CONDITION }],
            containers: [{
              name: "session",
              image: "registry.example/session:1",
              ports: [{ containerPort: CONTROLLER_PORT, protocol: "TCP" }]
            }]
          }
        } satisfies Pod
      ).pipe(Effect.mapError((status) => cliError(`demo: cannot create Pod ${name}: ${status.message}`)))
      const local = yield* listen(CONTROLLER_SESSION)
      const ref = { namespace: sc.namespace, name, uid: created.metadata?.uid ?? "" }
      yield* Effect.acquireRelease(
        sc.dataPlane.registerPod(ref, { host: "127.0.0.1", port: local }),
        () => Effect.ignore(sc.dataPlane.unregisterPod(ref))
      ).pipe(Effect.mapError((status) => cliError(`demo: cannot serve Pod ${name}: ${status.message}`)))
      yield* Console.log(`      workload: Pod ${name}, port ${CONTROLLER_PORT} on 127.0.0.1:${local}`)

      // Each change of the Pod's readiness, until it is Ready.
      let said = ""
      const ready = Effect.gen(function*() {
        const pod = yield* Effect.orDie(sc.cluster.store.get(PodResource, sc.namespace, name))
        const line = readinessLine(pod)
        if (line !== said) yield* Console.log(`      ${(said = line)}`)
        return pod.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") === true
      })
      const readyInTime = yield* ready.pipe(
        Effect.repeat({ until: (isReady) => isReady, schedule: Schedule.spaced(Duration.millis(25)) }),
        Effect.timeoutTo({
          duration: Duration.millis(DEMO_TIMING.routeDeadlineMs + 5_000),
          onSuccess: () => true,
          onTimeout: () => false
        })
      )
      if (!readyInTime) return yield* cliError(`demo: Pod ${name} did not turn Ready`)
      const host = `${CONTROLLER_PORT}-${CONTROLLER_SESSION}.${sc.baseDomain}`
      yield* Console.log(`      $ curl -H 'Host: ${host}' ${sc.dataPlane.url}/`)
      const answer = yield* requestThrough(sc.dataPlane, host).pipe(Effect.mapError((line) => cliError(line)))
      yield* Console.log(`      ${answerLine(answer)}`)
      if (answer.status !== 200 || answer.body !== workloadAnswer(CONTROLLER_SESSION, CONTROLLER_PORT)) {
        return yield* cliError(`demo: ${host} answered ${answerLine(answer)}`)
      }
      yield* sc.cluster.store.delete(PodResource, sc.namespace, name).pipe(Effect.ignore)
      yield* Console.log(`      deleted Pod ${name}: its objects go with it`)
      const outcome: Outcome = { served: 1, unclaimed: 0 }
      return outcome
    })
  )

const hosts = (n: number): string => `${n} ${n === 1 ? "host" : "hosts"}`

/** Runs the demo for `modes`: starts everything, runs each scenario, stops everything. */
export const runDemo = (modes: ReadonlyArray<DemoMode>) =>
  Effect.scoped(
    Effect.gen(function*() {
      const started = yield* Clock.currentTimeMillis
      const fs = yield* FileSystem.FileSystem
      const path = yield* Path.Path
      const presentation = yield* presentationFor("table")
      const delay = Duration.millis(DEMO_TIMING.controllerDelayMs)

      yield* Console.log("session-routing demo: a session's routes, published and checked, on an embedded cluster")
      const SessionCluster = yield* loadSessionCluster("demo")
      const sc = yield* SessionCluster.make({ ingress: { delay }, gateway: { delay }, controllerManager: true }).pipe(
        Effect.mapError((error) => cliError(`cannot start the local cluster: ${error.reason}`))
      )
      const dataPlane = sc.dataPlane
      if (dataPlane === undefined) return yield* cliError("demo: the local cluster started without its data plane")
      yield* seedUnservedClasses(sc)
      const dir = yield* fs.makeTempDirectoryScoped({ prefix: "session-routing-demo-" }).pipe(
        Effect.mapError((error) => cliError(`cannot create a temporary directory for the kubeconfig: ${error.message}`))
      )
      const kubeconfigPath = path.join(dir, "kubeconfig")
      yield* sc.cluster.writeKubeconfig(kubeconfigPath).pipe(Effect.mapError((error) => cliError(error.reason)))

      yield* Console.log(`\nLocalCluster (no real cluster: everything listens on 127.0.0.1 in this process)`)
      yield* Console.log(`      API server   ${sc.cluster.url}   kubeconfig ${kubeconfigPath}`)
      yield* Console.log(
        `      data plane   ${dataPlane.url}   routes by Host header, only what a controller programmed`
      )
      yield* Console.log(
        `      controllers  IngressClass "${sc.ingressClassName}" and Gateway ${sc.gateway.namespace}/${sc.gateway.name}, each writes status after ${DEMO_TIMING.controllerDelayMs} ms`
      )

      const scenarios = scenariosFor(sc, modes)
      const count = scenarios.length + 1
      const outcomes = yield* Effect.forEach(
        scenarios,
        (scenario, i) => runScenario({ ...sc, dataPlane }, kubeconfigPath, presentation, scenario, i + 1, count)
      )
      outcomes.push(yield* runControllerScene({ ...sc, dataPlane }, kubeconfigPath, count, count))
      const served = outcomes.reduce((n, o) => n + o.served, 0)
      const unclaimed = outcomes.reduce((n, o) => n + o.unclaimed, 0)
      return { started, served, unclaimed }
    })
  ).pipe(
    // Reported after the scope closed, so "stopped" is true when it is printed.
    Effect.flatMap(({ served, started, unclaimed }) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) =>
        Console.log(
          `\ndone in ${((now - started) / 1000).toFixed(1)} s: ${hosts(served)} programmed and served; ${
            hosts(unclaimed)
          } no controller claimed, reported unprogrammed; cluster stopped`
        ))
    )
  )

/** What `demo --help` says beyond the options. */
export const demoHelp: CommandHelp = {
  details: [
    "Runs LocalCluster in this process, publishes sessions through the live client, fetches each host " +
    "through the data plane, and then shows the failure session-routing exists to catch: a route no " +
    "controller claims, reported unprogrammed with why. No cluster needed; exit status 0 when everything " +
    "went as shown."
  ],
  examples: [
    { comment: "Both routing layers, then the unclaimed route", command: "session-routing demo" },
    { comment: "Gateway API HTTPRoutes only", command: "session-routing demo --mode gateway" }
  ]
}

/** `session-routing demo [--mode ingress|gateway]`. */
export const demoCommand = Command.make(
  "demo",
  {
    mode: Options.choice("mode", ["ingress", "gateway"] as const).pipe(
      Options.withDescription("Show one routing layer only (default: ingress, then gateway)"),
      Options.optional
    )
  },
  (flags) => runDemo(demoModes(flags.mode))
).pipe(
  Command.withDescription(
    "Publish sessions on an embedded cluster and show each host go pending → programmed, or unprogrammed"
  )
)
