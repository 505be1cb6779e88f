/**
 * The public API as a contract: every name each entry point exports, types included,
 * read through the TypeScript checker from the sources the build compiles. A name
 * added or removed changes what consumers can import, so it changes this list in the
 * same commit, on purpose.
 */
import { describe, expect, it } from "@effect/vitest"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import ts from "typescript"

const root = fileURLToPath(new URL("..", import.meta.url))

/** Each entry's exports and the checker that read them, one program per entry however many tests ask. */
const exportedBy = (() => {
  const config = ts.getParsedCommandLineOfConfigFile(join(root, "tsconfig.json"), {}, {
    ...ts.sys,
    onUnRecoverableConfigFileDiagnostic: (diagnostic) => {
      throw new Error(ts.flattenDiagnosticMessageText(diagnostic.messageText, "\n"))
    }
  })!
  const read = new Map<string, { readonly checker: ts.TypeChecker; readonly symbols: ReadonlyArray<ts.Symbol> }>()
  return (entry: string) => {
    const known = read.get(entry)
    if (known !== undefined) return known
    const file = join(root, entry)
    const program = ts.createProgram([file], config.options)
    const checker = program.getTypeChecker()
    const module = checker.getSymbolAtLocation(program.getSourceFile(file)!)!
    const exported = { checker, symbols: checker.getExportsOfModule(module) }
    read.set(entry, exported)
    return exported
  }
})()

/** The names `entry` exports, sorted, as a consumer's type checker sees them. */
const exportsOf = (entry: string): ReadonlyArray<string> =>
  exportedBy(entry).symbols.map((symbol) => symbol.name).sort()

const expected: Record<string, ReadonlyArray<string>> = {
  /** `session-routing`: what a runner composes. */
  "src/index.ts": [
    "CheckOptions",
    "CheckReport",
    "CheckResult",
    "DiagnosisCode",
    "Endpoint",
    "EventRecorder",
    "FollowOptions",
    "FollowedHost",
    "InvalidSession",
    "KubeClient",
    "KubeClientLive",
    "KubeConfigError",
    "KubeError",
    "PortMapping",
    "Protocol",
    "PublishError",
    "PublishedRoute",
    "PublishedSession",
    "RouteHealthEvent",
    "RouteProbe",
    "RouteReadError",
    "RouteState",
    "RouteStatusSource",
    "RouterConfig",
    "RouterConfigError",
    "RouterConfigLive",
    "RouterSetupError",
    "RoutingMetrics",
    "RoutingMode",
    "SessionEvent",
    "SessionRouter",
    "SessionRouting",
    "SessionSpec",
    "Telemetry",
    "TracingExport",
    "UnprogrammedCode",
    "WatchUnavailable",
    "checkRouting",
    "followSession",
    "parsePorts",
    "parseSessionId",
    "publishSession",
    "reportRouteHealth",
    "reportSession",
    "sessionStatus",
    "unpublishSession",
    "watchRouteHealth"
  ],
  /** `session-routing/controller`: controller mode as a library. */
  "src/controller.ts": [
    "ControllerElection",
    "ControllerOptions",
    "ControllerSetupError",
    "ENDPOINTS_ANNOTATION",
    "InvalidLeaderElectionSettings",
    "LeaderElectionSettings",
    "LeadershipChange",
    "LeadershipLost",
    "PORTS_ANNOTATION",
    "PodHost",
    "PodProblem",
    "PodReport",
    "PodRoutes",
    "PodSession",
    "ROUTES_CONDITION",
    "SESSION_LABEL",
    "controllerLeaseName",
    "podSession",
    "routesCondition",
    "runController",
    "shardOf"
  ],
  /** `session-routing/manifests`: the pure rules. */
  "src/manifests.ts": [
    "Cause",
    "DIAGNOSIS_CODES",
    "EventReason",
    "GONE_REASON",
    "GatewayRef",
    "HostReport",
    "LABEL_SESSION_ID",
    "ManifestSettings",
    "RBAC_NAME",
    "RbacSettings",
    "RouteHold",
    "RouteVerdict",
    "RoutingPath",
    "SessionId",
    "Unprogrammed",
    "buildSessionHttpRoutes",
    "buildSessionIngress",
    "buildSessionObjects",
    "buildSessionService",
    "clusterRules",
    "endpointsFor",
    "gatewayPath",
    "hostForPort",
    "httpRouteVerdict",
    "ingressPath",
    "ingressVerdict",
    "parsePortSpec",
    "rbacManifest",
    "rbacObjectName",
    "reportOf",
    "sessionObjectName",
    "sessionRules"
  ],
  /** `session-routing/kubernetes`: what implementing or driving a KubeClient takes. */
  "src/kubernetes.ts": [
    "ClusterRoleBindingResource",
    "ClusterRoleResource",
    "Condition",
    "ContainerPort",
    "CoreEvent",
    "Endpoint",
    "EndpointPort",
    "EndpointSlice",
    "EndpointSliceResource",
    "EventResource",
    "EventV1",
    "EventV1Resource",
    "EventWrites",
    "FIELD_MANAGER",
    "Gateway",
    "GatewayClass",
    "GatewayClassResource",
    "GatewayListener",
    "GatewayResource",
    "HTTP_PATH",
    "HTTP_PATH_FMT",
    "HttpBackendRef",
    "HttpIngressPath",
    "HttpRoute",
    "HttpRouteMatch",
    "HttpRouteResource",
    "HttpRouteRule",
    "Ingress",
    "IngressBackend",
    "IngressClass",
    "IngressClassResource",
    "IngressResource",
    "IngressRule",
    "IngressServiceBackend",
    "IngressTls",
    "KubeClient",
    "KubeClientPrimitives",
    "KubeError",
    "KubeObject",
    "Lease",
    "LeaseCalls",
    "LeaseResource",
    "ListenerStatus",
    "LoadBalancerIngress",
    "ManagedFieldsEntry",
    "Namespace",
    "NamespaceResource",
    "ObjectList",
    "ObjectMeta",
    "ObjectReference",
    "OwnerReference",
    "ParentReference",
    "Pod",
    "PodCondition",
    "PodResource",
    "PodWrites",
    "PolicyRule",
    "RawWatchEvent",
    "ReadableObject",
    "RequestContext",
    "ResourceType",
    "ResumableWatchOptions",
    "Role",
    "RoleBinding",
    "RoleBindingResource",
    "RoleResource",
    "RouteParentStatus",
    "Service",
    "ServiceAccount",
    "ServiceAccountResource",
    "ServicePort",
    "ServiceResource",
    "Status",
    "StatusCause",
    "Subject",
    "Transport",
    "WatchEvent",
    "allResources",
    "apiVersionOf",
    "byteLength",
    "describeRequest",
    "fromResponse",
    "fromStatus",
    "hostnameMatches",
    "hostnamesIntersect",
    "isDns1035Label",
    "isDns1123Label",
    "isDns1123Subdomain",
    "isIPAddress",
    "isQualifiedName",
    "isValidLabelValue",
    "isValidPathSegmentName",
    "isValidPortName",
    "isValidPortNum",
    "isWildcardDns1123Subdomain",
    "listenerAdmitsNamespace",
    "listenerSupportsHttpRoute",
    "makeKubeClient",
    "namespaceLabelsOf",
    "qualifiedName",
    "regexError",
    "requestContext",
    "resourcePath",
    "withoutTransientRetry"
  ],
  /** `@session-routing/local-cluster`. */
  "packages/local-cluster/src/index.ts": [
    "ClusterHandle",
    "ControllerDelay",
    "Credential",
    "DataPlane",
    "Fault",
    "FaultAction",
    "FaultSpec",
    "FieldError",
    "GatewayController",
    "InMemoryKubeClient",
    "IngressController",
    "LocalCluster",
    "LocalClusterOptions",
    "MemoryStore",
    "ServerLifecycle",
    "SessionCluster",
    "SessionPod",
    "Verb",
    "createSessionPod",
    "kubeconfigFor",
    "makeCertificateAuthority",
    "validateObject",
    "writeCredentialFile"
  ]
}

describe("the public API", () => {
  for (const [entry, names] of Object.entries(expected)) {
    it(`${entry} exports exactly its listed names`, () => {
      expect(exportsOf(entry)).toEqual(names)
    }, 60_000)
  }
})

/** The JSDoc tags of every declaration behind each export of `entry`, by export name. */
const tagsOfExports = (entry: string): ReadonlyArray<readonly [string, ReadonlyArray<string>]> => {
  const { checker, symbols } = exportedBy(entry)
  return symbols.flatMap((symbol) => {
    const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol
    // A namespace (`export * as X`) is documented where the entry exports it, as Effect's index does.
    const declarations = (target.declarations ?? []).some(ts.isSourceFile)
      ? (symbol.declarations ?? []).map((declaration) => declaration.parent)
      : (target.declarations ?? [])
    // An overloaded function's implementation signature is invisible to consumers: its overloads carry the docs.
    const visible = declarations.filter((declaration) =>
      !(ts.isFunctionDeclaration(declaration) && declaration.body !== undefined && declarations.length > 1)
    )
    return visible.map((declaration): readonly [string, ReadonlyArray<string>] => [
      symbol.name,
      ts.getJSDocTags(ts.isVariableDeclaration(declaration) ? declaration.parent.parent : declaration)
        .map((tag) => tag.tagName.text)
    ])
  })
}

describe("the library's entries' documentation", () => {
  it("holds the main entry to about 45 names: a runner reads it in one sitting", () => {
    expect(exportsOf("src/index.ts").length).toBeLessThanOrEqual(47)
  }, 60_000)

  it.each(["src/index.ts", "src/controller.ts", "src/manifests.ts"])(
    "%s gives every export, each declaration behind it, a @since and a @category, as Effect's packages do",
    (entry) => {
      const tagged = tagsOfExports(entry)
      expect(tagged.length).toBeGreaterThan(15)
      expect(tagged.filter(([, tags]) => !tags.includes("since") || !tags.includes("category")).map(([name]) => name))
        .toEqual([])
    },
    60_000
  )
})
