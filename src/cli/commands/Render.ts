/**
 * `session-routing render`: prints the objects a publish would apply for a session,
 * Service first, as a YAML stream or one JSON List; with `--rbac` a runner's RBAC
 * objects, with `--controller` what deploys controller mode. Nothing touches a cluster,
 * so it shows what the configuration produces and feeds `kubectl apply -f -`.
 */
import { Command, Options } from "@effect/cli"
import { Console, Effect, Either, Option } from "effect"
import packageJson from "session-routing/package.json" with { type: "json" }
import * as YAML from "yaml"
import { CONTROLLER_IMAGE_REPOSITORY, controllerManifest } from "../../domain/ControllerManifest.js"
import { buildSessionObjects, sessionObjectName } from "../../domain/Manifests.js"
import type { KubeObject } from "../../domain/Objects.js"
import { rbacManifest, type RbacSettings } from "../../domain/RbacManifest.js"
import { hostProblem } from "../../domain/Routes.js"
import { parseSessionId, type PortMapping } from "../../domain/Session.js"
import { environmentOf } from "../../layers/routerConfig/Environment.js"
import * as RouterConfigLive from "../../layers/RouterConfigLive.js"
import { manifestSettingsOf, type RouterConfig } from "../../services/RouterConfig.js"
import { cliError } from "../CliError.js"
import { noBaseDomainNote, routerConfigFrom, routingOptions, warnAbout } from "../GlobalOptions.js"
import type { CommandHelp } from "../internal/Help.js"
import { parsePodFlags, parsePortFlags, podFlag, podUidFlag, portFlag, sessionFlag } from "../SessionFlags.js"

/** The output formats of `render`. */
export type RenderFormat = "yaml" | "json"

/**
 * The owner uid used when `--pod-uid` is not given. The API server accepts any
 * non-empty uid, but the garbage collector deletes objects whose owner does not
 * exist, so applying a render that carries it removes the objects again.
 */
export const PLACEHOLDER_POD_UID = "00000000-0000-0000-0000-000000000000"

const YAML_OPTIONS = {
  // Never fold a long value, so hosts and names stay greppable.
  lineWidth: 0,
  // No anchors: a value two fields share (a Deployment's labels) is written out each time.
  aliasDuplicateObjects: false,
  // kubectl reads YAML 1.1, where a bare off, on, yes or y is a boolean: quote them, or
  // an env value "off" or a session id "on" reaches the API server as a bool and is refused.
  version: "1.1"
} as const

/**
 * The objects as text. YAML: one document per object separated by `---` (empty when
 * there is none). JSON: one `v1` `List`, the shape `kubectl get -o json` prints.
 */
export const formatObjects = (objects: ReadonlyArray<KubeObject>, format: RenderFormat): string =>
  format === "json"
    ? JSON.stringify({ apiVersion: "v1", kind: "List", items: objects }, null, 2) + "\n"
    : objects.map((object) => YAML.stringify(object, YAML_OPTIONS)).join("---\n")

/** What `render` needs, after every flag is checked. */
export interface RenderInput {
  readonly sessionId: string
  readonly ports: ReadonlyArray<PortMapping>
  readonly podName: string
  readonly podUid: string
  readonly format: RenderFormat
}

/** The render flags as @effect/cli parses them: raw text, checked by `parseRenderInput`. */
export interface RenderFlags {
  readonly session: string
  readonly port: ReadonlyArray<string>
  readonly pod: Option.Option<string>
  readonly podUid: Option.Option<string>
  readonly output: RenderFormat
}

/** Checks the flags in order and stops at the first bad one, with a line naming it. */
export const parseRenderInput = (flags: RenderFlags): Either.Either<RenderInput, string> =>
  Either.gen(function*() {
    const sessionId = yield* parseSessionId(flags.session)
    const ports = yield* parsePortFlags(flags.port)
    const { podName, podUid } = yield* parsePodFlags(
      Option.getOrElse(flags.pod, () => sessionObjectName(sessionId)),
      Option.getOrElse(flags.podUid, () => PLACEHOLDER_POD_UID)
    )
    return { sessionId, ports, podName, podUid, format: flags.output }
  })

/**
 * The objects a publish would apply, or why there are none. `notes` are lines for
 * stderr, each starting `note:` or `warning:`.
 * Without a base domain nothing is published (endpoints stay host-less), so nothing
 * is rendered either.
 */
export const renderObjects = (
  config: RouterConfig.Service,
  input: RenderInput
): Either.Either<{ readonly objects: ReadonlyArray<KubeObject>; readonly notes: ReadonlyArray<string> }, string> => {
  if (config.mode === "none") {
    return Either.right({ objects: [], notes: ["note: mode none publishes nothing for a session"] })
  }
  const settings = manifestSettingsOf(config)
  if (settings === undefined) {
    return Either.right({ objects: [], notes: [noBaseDomainNote] })
  }
  // The configuration already leaves room for the longest id; this guards a
  // RouterConfig.Service built some other way, before any object is built.
  const problem = hostProblem(settings.baseDomain, input.sessionId)
  if (problem !== undefined) return Either.left(problem)
  const objects = buildSessionObjects(config.mode, settings, {
    sessionId: input.sessionId,
    podName: input.podName,
    podUid: input.podUid,
    ports: input.ports
  })
  const notes = input.podUid === PLACEHOLDER_POD_UID
    ? [
      `warning: no --pod-uid given: the owner reference carries the placeholder uid ${PLACEHOLDER_POD_UID}; the cluster's garbage collector deletes objects whose owner Pod does not exist, so pass the session Pod's uid before applying`
    ]
    : []
  return Either.right({ objects, notes })
}

/** What the grants of a configuration that routes in `mode` derive from. */
const rbacSettingsOf = (config: RouterConfig.Service, mode: "ingress" | "gateway"): RbacSettings => ({
  mode,
  sessionNamespace: config.sessionNamespace,
  ...(config.gateway !== undefined
    ? { gateway: { name: config.gateway.name, namespace: config.gateway.namespace } }
    : {}),
  statusSource: config.statusSource,
  ...(config.routeProbe !== undefined ? { probe: true } : {})
})

/**
 * The RBAC objects a runner with this configuration needs, or why there are none: the
 * ServiceAccount `session-routing` in the session namespace, its Role and binding there
 * (and in the Gateway's namespace when that differs), and the ClusterRole for the classes.
 */
export const renderRbac = (
  config: RouterConfig.Service
): { readonly objects: ReadonlyArray<KubeObject>; readonly notes: ReadonlyArray<string> } =>
  config.mode === "none"
    ? { objects: [], notes: ["note: mode none publishes nothing, so it needs no permissions"] }
    : { objects: rbacManifest(rbacSettingsOf(config, config.mode)), notes: [] }

/** The image `render --controller` runs unless `--image` names another: this release's. */
export const DEFAULT_CONTROLLER_IMAGE = `${CONTROLLER_IMAGE_REPOSITORY}:${packageJson.version}`

/**
 * What deploys controller mode with this configuration, or why there is nothing to
 * deploy: the controller's RBAC objects (the runner's grants plus its own) and its
 * Deployment, whose environment holds the configuration.
 */
export const renderController = (
  config: RouterConfig.Service,
  image: string
): { readonly objects: ReadonlyArray<KubeObject>; readonly notes: ReadonlyArray<string> } =>
  config.mode === "none"
    ? { objects: [], notes: ["note: mode none publishes nothing, so there is no controller to deploy"] }
    : {
      objects: controllerManifest({ ...rbacSettingsOf(config, config.mode), image, env: environmentOf(config) }),
      // Deployed without one, the controller runs and publishes nothing.
      notes: config.baseDomain === undefined
        ? [
          `warning: no base domain is set, so the controller would publish nothing: set ${RouterConfigLive.ENV.baseDomain} before rendering, or in the Deployment's env`
        ]
        : []
    }

/** `--image`, or this release's image; one word, since the Deployment runs it as given. */
const parseImage = (image: Option.Option<string>): Either.Either<string, string> => {
  const value = Option.getOrElse(image, () => DEFAULT_CONTROLLER_IMAGE)
  return value === "" || /\s/.test(value)
    ? Either.left(`--image ${JSON.stringify(value)} must name an image, e.g. ${DEFAULT_CONTROLLER_IMAGE}`)
    : Either.right(value)
}

/** The notes on stderr, then the objects on stdout. */
const printRendered = (
  rendered: { readonly objects: ReadonlyArray<KubeObject>; readonly notes: ReadonlyArray<string> },
  format: RenderFormat
): Effect.Effect<void> =>
  Effect.gen(function*() {
    for (const note of rendered.notes) yield* Console.error(note)
    const text = formatObjects(rendered.objects, format)
    // Console.log adds the final newline; an empty stream prints nothing at all.
    if (text.length > 0) yield* Console.log(text.replace(/\n$/, ""))
  })

/** What `render --help` says beyond the options. */
export const renderHelp: CommandHelp = {
  details: [
    "Touches no cluster: it shows what the configuration produces and feeds kubectl apply -f -. " +
    `Everything but the flags comes from the environment (${RouterConfigLive.ENV.baseDomain}, ` +
    `${RouterConfigLive.ENV.ingressClassName}, ...); without a base domain nothing is rendered.`,
    "--controller prints what deploys controller mode (the controller command) with this configuration: " +
    "its ServiceAccount, a Role with the runner's grants plus Pods, pods/status and Leases, the bindings, " +
    "and a Deployment whose environment holds the configuration. deploy/controller.yaml is that for the defaults."
  ],
  examples: [
    {
      comment: "The Service and Ingress of session hzyayvabgyvz's ports 8080 and 5000/udp, as YAML",
      command:
        "SESSION_ROUTING_BASE_DOMAIN=sessions.example.com session-routing render --session hzyayvabgyvz --port 8080 --port 5000/udp"
    },
    {
      comment: "The ServiceAccount, Roles and bindings a runner in namespace telo-sessions needs",
      command: "session-routing render --rbac -n telo-sessions | kubectl apply -f -"
    },
    {
      comment: "Deploy controller mode for gateway mode in namespace dev",
      command:
        "SESSION_ROUTING_BASE_DOMAIN=sessions.example.com SESSION_GATEWAY_NAME=sessions session-routing render --controller --mode gateway -n dev | kubectl apply -f -"
    }
  ],
  usage: [
    "--session ID --port PORT[/tcp|/udp]... [options]",
    "--rbac [options]",
    "--controller [--image IMAGE] [options]"
  ]
}

/**
 * The first of the flags naming one session that was given: `--rbac` and `--controller`
 * render objects for every session, and ignoring one would print something other than
 * what was asked for.
 */
const sessionFlagGiven = (flags: {
  readonly session: Option.Option<string>
  readonly port: ReadonlyArray<unknown>
  readonly pod: Option.Option<string>
  readonly podUid: Option.Option<string>
}): string | undefined =>
  Option.isSome(flags.session)
    ? "--session"
    : flags.port.length > 0
    ? "--port"
    : Option.isSome(flags.pod)
    ? "--pod"
    : Option.isSome(flags.podUid)
    ? "--pod-uid"
    : undefined

/**
 * `session-routing render --session ID --port 8080 [--port 5000/udp ...] [--pod NAME --pod-uid UID]
 * [--mode ingress|gateway|none] [-n NAMESPACE] [-o yaml|json]`.
 */
export const renderCommand = Command.make(
  "render",
  {
    session: sessionFlag(
      "Session id: lower-case letters, digits and '-' (e.g. hzyayvabgyvz); required unless --rbac or --controller"
    ).pipe(Options.optional),
    port: portFlag(
      "A session port, e.g. 8080 or 5000/udp; repeat the option for each port; at least one unless --rbac or --controller"
    ).pipe(Options.repeated),
    pod: podFlag("Name of the session Pod that owns the objects (default: telo-run-<session>)").pipe(Options.optional),
    podUid: podUidFlag(
      `metadata.uid of that Pod (default: the placeholder ${PLACEHOLDER_POD_UID}, which the garbage collector deletes objects for)`
    ).pipe(Options.optional),
    rbac: Options.boolean("rbac").pipe(
      Options.withDescription(
        "Print instead the RBAC objects a runner with this configuration needs (no --session or --port)"
      )
    ),
    controller: Options.boolean("controller").pipe(
      Options.withDescription(
        "Print instead the RBAC objects and Deployment of controller mode with this configuration (no --session or --port)"
      )
    ),
    image: Options.text("image").pipe(
      Options.withPseudoName("IMAGE"),
      Options.withDescription(`With --controller: the image the Deployment runs (default ${DEFAULT_CONTROLLER_IMAGE})`),
      Options.optional
    ),
    output: Options.choice("output", ["yaml", "json"] as const).pipe(
      Options.withAlias("o"),
      Options.withDescription("Output format: yaml (a multi-document stream) or json (one v1 List)"),
      Options.withDefault("yaml")
    ),
    ...routingOptions
  },
  (flags) =>
    Effect.gen(function*() {
      // Configuration first: a bad environment is a start-up failure whatever the flags say.
      const config = yield* routerConfigFrom(flags)
      if (flags.rbac && flags.controller) {
        return yield* cliError("--rbac and --controller go apart: --controller already prints the controller's RBAC")
      }
      if (Option.isSome(flags.image) && !flags.controller) return yield* cliError("--image goes with --controller")
      const sessionFlag = sessionFlagGiven(flags)
      if (sessionFlag !== undefined && (flags.rbac || flags.controller)) {
        const instead = flags.rbac ? "--rbac" : "--controller"
        return yield* cliError(
          `${sessionFlag} does not go with ${instead}: it prints the same objects for every session`
        )
      }
      if (flags.controller) {
        const image = yield* Either.mapLeft(parseImage(flags.image), (line) => cliError(line))
        yield* warnAbout(config)
        return yield* printRendered(renderController(config, image), flags.output)
      }
      if (flags.rbac) return yield* printRendered(renderRbac(config), flags.output)
      if (Option.isNone(flags.session)) return yield* cliError("missing option --session for render")
      const input = yield* Either.mapLeft(parseRenderInput({ ...flags, session: flags.session.value }), (line) =>
        cliError(line))
      const rendered = yield* Either.mapLeft(renderObjects(config, input), (line) =>
        cliError(line))
      yield* warnAbout(config)
      yield* printRendered(rendered, input.format)
    })
).pipe(Command.withDescription("Print the objects a publish would apply for a session, Service first"))
