/**
 * `npm run cluster:real -- --kubeconfig PATH`: builds the real control plane if it is not
 * built yet, starts it on 127.0.0.1, writes its admin kubeconfig to PATH, prints where
 * everything is as `key: value` lines (as `session-routing cluster` does) and then `ready`,
 * and serves until SIGINT or SIGTERM, or until a component dies, which it names.
 *
 * stdout carries only those lines; progress, hints and failures go to stderr.
 */
import { Deferred, Effect, Exit, Fiber, Scope } from "effect"
import { createServer } from "node:http"
import { resolve } from "node:path"
import { parseArgs } from "node:util"
import { sessionSelector } from "../../src/domain/Manifests.js"
import { ENV } from "../../src/layers/RouterConfigLive.js"
import { ensureBuilt } from "./Build.js"
import { type ControlPlane, startControlPlane } from "./ControlPlane.js"
import { ControlPlaneError } from "./ControlPlaneError.js"

const USAGE = `usage: npm run cluster:real -- --kubeconfig PATH [options]

Starts a real Kubernetes control plane on 127.0.0.1 (etcd, kube-apiserver, kube-controller-manager,
kube-scheduler, kwok with one Node, Traefik as Ingress and Gateway API controller), built from Go
modules by test/control-plane/build.sh on first use. Ctrl-C stops it.

  --kubeconfig PATH        write the admin kubeconfig here (required)
  --namespace NS           the session namespace (default telo-sessions)
  --base-domain DOMAIN     session hosts are <port>-<session>.DOMAIN (default sessions.localtest.me)
  --gateway-file FILE      set up the Namespaces and Gateways of FILE instead of the default Gateway
  --port N                 kube-apiserver's port (default 0: a free one)
  --data-plane-port N      Traefik's data plane port (default 0: a free one)
  --control                serve POST /restart/kube-apiserver on 127.0.0.1 (for tests), printed as control:
  --until-stdin-closes     also stop when standard input closes (when started by another program)
  --no-build               fail rather than build what is missing`

const fail = (message: string): never => {
  process.stderr.write(`cluster:real: ${message}\n`)
  process.exit(2)
}

const parsePort = (flag: string, text: string | undefined): number => {
  if (text === undefined) return 0
  const port = /^\d+$/.test(text) ? Number(text) : Number.NaN
  if (!Number.isSafeInteger(port) || port > 65535) fail(`--${flag}=${JSON.stringify(text)} must be a port, 0..65535`)
  return port
}

const { values } = (() => {
  try {
    return parseArgs({
      options: {
        kubeconfig: { type: "string" },
        namespace: { type: "string" },
        "base-domain": { type: "string" },
        "gateway-file": { type: "string" },
        port: { type: "string" },
        "data-plane-port": { type: "string" },
        control: { type: "boolean" },
        "until-stdin-closes": { type: "boolean" },
        "no-build": { type: "boolean" },
        help: { type: "boolean", short: "h" }
      },
      strict: true,
      allowPositionals: false
    })
  } catch (error) {
    return fail(`${error instanceof Error ? error.message : String(error)}\n${USAGE}`)
  }
})()

if (values.help === true) {
  process.stdout.write(`${USAGE}\n`)
  process.exit(0)
}
const kubeconfig = values.kubeconfig?.trim() ?? ""
if (kubeconfig === "") fail(`--kubeconfig PATH is required: where to write the admin kubeconfig\n${USAGE}`)

const apiServerPort = parsePort("port", values.port)
const dataPlanePort = parsePort("data-plane-port", values["data-plane-port"])

const stderr = (line: string) => process.stderr.write(`${line}\n`)

/** The `key: value` lines, `server` first as `session-routing cluster` prints them, then this cluster's own. */
const describe = (cp: ControlPlane, control: string | undefined): ReadonlyArray<string> => [
  `server: ${cp.server}`,
  `data-plane: http://${cp.dataPlane.host}:${cp.dataPlane.port}`,
  `kubeconfig: ${cp.kubeconfig}`,
  `namespace: ${cp.namespace}`,
  `base-domain: ${cp.baseDomain}`,
  `ingress-class: ${cp.ingressClass}`,
  `gateway: ${cp.gateway.namespace}/${cp.gateway.name}`,
  `gateway-class: ${cp.gateway.className}`,
  `gateway-controller: ${cp.gatewayController}`,
  `node-address: ${cp.nodeAddress}`,
  `kubernetes: ${cp.serverVersion}`,
  `logs: ${cp.workDir}/logs`,
  ...(control !== undefined ? [`control: ${control}`] : []),
  `environment: ${
    [
      `${ENV.baseDomain}=${cp.baseDomain}`,
      `${ENV.sessionNamespace}=${cp.namespace}`,
      `${ENV.ingressClassName}=${cp.ingressClass}`,
      `${ENV.gatewayName}=${cp.gateway.name}`,
      `${ENV.gatewayNamespace}=${cp.gateway.namespace}`
    ].join(" ")
  }`
]

/** The test endpoint: POST /restart/kube-apiserver answers once it is back (200) or could not be (500). */
const serveControl = (cp: ControlPlane) =>
  Effect.acquireRelease(
    Effect.async<{ readonly url: string; readonly close: () => void }>((resume) => {
      const server = createServer((req, res) => {
        if (req.method !== "POST" || req.url !== "/restart/kube-apiserver") {
          res.writeHead(404).end("POST /restart/kube-apiserver\n")
          return
        }
        Effect.runPromiseExit(cp.restartApiServer).then((exit) => {
          if (Exit.isSuccess(exit)) res.writeHead(200).end("restarted\n")
          else res.writeHead(500).end(`${Exit.isFailure(exit) ? String(exit.cause) : ""}\n`)
        })
      })
      server.listen(0, "127.0.0.1", () => {
        const address = server.address()
        const port = typeof address === "object" && address !== null ? address.port : 0
        resume(Effect.succeed({ url: `http://127.0.0.1:${port}`, close: () => server.close() }))
      })
    }),
    (control) => Effect.sync(control.close)
  )

const program = Effect.gen(function*() {
  const stop = yield* Deferred.make<string>()
  const onSignal = (signal: NodeJS.Signals) => Deferred.unsafeDone(stop, Exit.succeed(signal))
  process.once("SIGINT", onSignal)
  process.once("SIGTERM", onSignal)
  if (values["until-stdin-closes"] === true) {
    process.stdin.resume()
    process.stdin.once("end", () => Deferred.unsafeDone(stop, Exit.succeed("standard input closed")))
    process.stdin.once("error", () => Deferred.unsafeDone(stop, Exit.succeed("standard input closed")))
  }

  if (values["no-build"] !== true) {
    // A signal during the build stops it too.
    yield* Effect.raceFirst(
      ensureBuilt(stderr),
      Effect.flatMap(
        Deferred.await(stop),
        (why) => Effect.fail(new ControlPlaneError({ message: `${why} during the build` }))
      )
    )
  }
  const scope = yield* Scope.make()
  const closing = (exit: Exit.Exit<unknown, unknown>) =>
    Effect.gen(function*() {
      stderr("stopping the control plane")
      yield* Scope.close(scope, exit)
      stderr("control plane stopped")
    })
  const started = yield* startControlPlane({
    kubeconfig: resolve(kubeconfig),
    ...(values.namespace !== undefined ? { namespace: values.namespace } : {}),
    ...(values["base-domain"] !== undefined ? { baseDomain: values["base-domain"] } : {}),
    ...(values["gateway-file"] !== undefined ? { gatewayFile: resolve(values["gateway-file"]) } : {}),
    apiServerPort,
    dataPlanePort,
    progress: (line) => stderr(`control plane: ${line}`)
  }).pipe(
    Scope.extend(scope),
    // Interrupted by a signal while starting: stop what started, and say it was the signal.
    Effect.raceFirst(
      Effect.flatMap(
        Deferred.await(stop),
        (why) => Effect.fail(new ControlPlaneError({ message: `${why} while starting` }))
      )
    ),
    Effect.onExit((exit) => (Exit.isFailure(exit) ? closing(exit) : Effect.void))
  )
  const control = values.control === true ? yield* Scope.extend(serveControl(started), scope) : undefined
  for (const line of describe(started, control?.url)) process.stdout.write(`${line}\n`)
  // The objects name their owner Pod by uid: a made-up uid has them collected at once.
  const kubectl = `kubectl --kubeconfig ${started.kubeconfig} -n ${started.namespace}`
  stderr(`try:\n  kubectl --kubeconfig ${started.kubeconfig} get nodes,ingressclass,gatewayclass,gateway -A`)
  // The session Service selects its Pod by the session label: without it the Service
  // has no endpoint, and Traefik answers 404 for the host however programmed it is.
  stderr(`  ${kubectl} run telo-run-demo --image=session --port=8080 --labels=${sessionSelector("demo")}`)
  stderr(
    `  env ${ENV.baseDomain}=${started.baseDomain} ${ENV.sessionNamespace}=${started.namespace} ${ENV.ingressClassName}=${started.ingressClass} ` +
      `session-routing publish --kubeconfig ${started.kubeconfig} --session demo --pod telo-run-demo ` +
      `--pod-uid "$(${kubectl} get pod telo-run-demo -o jsonpath='{.metadata.uid}')" --port 8080 --watch`
  )
  // No container runs: the Pod's address is the Node's, where nothing listens until a
  // person starts the workload there.
  stderr(
    `  curl -H 'Host: 8080-demo.${started.baseDomain}' http://${started.dataPlane.host}:${started.dataPlane.port}/   ` +
      `# 404 until the Service has an endpoint, 502 until an HTTP server listens on ${started.nodeAddress}:8080`
  )
  process.stdout.write("ready\n")

  const watching = yield* Effect.fork(started.watch)
  const outcome = yield* Effect.raceFirst(
    Effect.map(Deferred.await(stop), (why) => ({ why, died: undefined })),
    Effect.map(Effect.flip(Fiber.join(watching)), (died) => ({ why: "a component died", died }))
  )
  yield* Fiber.interrupt(watching)
  if (outcome.died !== undefined) stderr(`cluster:real: ${outcome.died.message}`)
  else stderr(`${outcome.why}: stopping`)
  yield* closing(outcome.died === undefined ? Exit.void : Exit.fail(outcome.died))
  return outcome.died === undefined ? 0 : 1
})

Effect.runPromiseExit(program).then((exit) => {
  if (Exit.isSuccess(exit)) process.exit(exit.value)
  const failure = exit.cause._tag === "Fail" ? exit.cause.error : undefined
  stderr(`cluster:real: ${failure instanceof ControlPlaneError ? failure.message : String(exit.cause)}`)
  process.exit(1)
})
