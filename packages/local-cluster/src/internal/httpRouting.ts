/**
 * Where a request goes: discovery, `/version`, health and `/metrics` answered from
 * what the store serves, and a resource path resolved to its type, namespace, name
 * and subresource, as the API server's router resolves them.
 */
import { Effect } from "effect"
import { type KubeObject } from "session-routing/kubernetes"
import { reviewDiscovery } from "../AccessReview.js"
import { type ClusterMetrics, EXPOSITION_CONTENT_TYPE } from "../Metrics.js"
import { selfSubjectReviewDiscovery } from "../SelfSubjectReview.js"
import { type ServedResource, servedResources } from "../ServedResources.js"
import type { ClusterStore } from "../Store.js"
import { isTokenRequest } from "../TokenRequest.js"
import {
  aggregatedDiscovery,
  apiGroup,
  apiResourcesOf,
  resourceList,
  type ServedGroupVersion,
  wantsAggregated
} from "./discovery.js"
import { json, pageNotFound, type Reply } from "./httpReply.js"
import { openApiV3 } from "./openApi.js"
import { OPENAPI_V2_PROTOBUF, OPENAPI_V2_PROTOBUF_RESPONSE, openApiV2Json, openApiV2Protobuf } from "./openApiV2.js"

export interface Target {
  readonly resource: ServedResource<KubeObject>
  readonly namespace: string | undefined
  readonly name: string | undefined
  readonly subresource: string | undefined
}

export type Route =
  | { readonly _tag: "Reply"; readonly reply: Effect.Effect<Reply> }
  | { readonly _tag: "Resource"; readonly target: Target }

const resourcesIn = (group: string, version: string) =>
  (servedResources as ReadonlyArray<ServedResource<KubeObject>>).filter((r) =>
    r.group === group && r.version === version
  )

/** The named groups of the stored types, built-in or custom. */
const groups = (custom: boolean): Array<string> => [
  ...new Set(servedResources.filter((r) => r.group !== "" && r.custom === custom).map((r) => r.group))
]

/** What the router reads: the store's served types, the counters, and what the server reports of itself. */
export interface RouterOptions {
  readonly store: ClusterStore
  readonly metrics: ClusterMetrics
  readonly gitVersion: string
  /** `127.0.0.1:<port>`, known once the server listens. */
  readonly serverAddress: () => string
}

/** Routes a request's path segments to a reply (discovery and the like) or to a resource target. */
export const makeRouter = ({ gitVersion, metrics, serverAddress, store }: RouterOptions) => {
  const served = (resource: ServedResource<KubeObject>) => store.isServed(resource)

  const servedIn = (group: string, version: string): Effect.Effect<ServedGroupVersion | undefined> =>
    Effect.map(Effect.filter(resourcesIn(group, version), served), (resources) =>
      resources.length === 0
        ? undefined
        : { group, version, custom: resources[0]!.custom, resources: apiResourcesOf(resources) })

  /**
   * Every named group version served now, in the order `/apis` lists them: built-in
   * groups, the review groups (authentication before authorization, as the real server
   * ranks them; no stored types, served all the same), then custom resources' groups,
   * last as on a real server.
   */
  const namedGroups = Effect.map(
    Effect.all([
      Effect.forEach(groups(false), (group) => servedIn(group, "v1")),
      Effect.forEach(groups(true), (group) => servedIn(group, "v1"))
    ]),
    ([builtIn, custom]) => {
      const all = [...builtIn, selfSubjectReviewDiscovery, reviewDiscovery, ...custom]
      return all.filter((g): g is ServedGroupVersion => g !== undefined)
    }
  )

  const findGroup = (group: string) => Effect.map(namedGroups, (all) => all.find((g) => g.group === group))

  const route = (segments: ReadonlyArray<string>, accept: string | undefined): Effect.Effect<Route> =>
    Effect.gen(function*() {
      const reply = (effect: Effect.Effect<Reply>): Route => ({ _tag: "Reply", reply: effect })
      const [root, ...rest] = segments
      if (root === "version" && rest.length === 0) {
        const [, major, minor] = /^v(\d+)\.(\d+)/.exec(gitVersion) ?? ["", "1", "30"]
        return reply(Effect.succeed(json(200, {
          major,
          minor,
          gitVersion,
          gitCommit: "0000000000000000000000000000000000000000",
          gitTreeState: "clean",
          buildDate: "2024-04-17T17:27:03Z",
          goVersion: "go1.24.9",
          compiler: "gc",
          platform: "linux/amd64"
        })))
      }
      if ((root === "healthz" || root === "livez" || root === "readyz") && rest.length === 0) {
        return reply(Effect.succeed({ code: 200, contentType: "text/plain; charset=utf-8", body: "ok" }))
      }
      if (root === "metrics" && rest.length === 0) {
        return reply(
          Effect.map(metrics.exposition, (body) => ({ code: 200, contentType: EXPOSITION_CONTENT_TYPE, body }))
        )
      }
      const servedNow = Effect.filter(servedResources as ReadonlyArray<ServedResource<KubeObject>>, served)
      if (root === "openapi" && rest.length === 1 && rest[0] === "v2") {
        return reply(Effect.map(servedNow, (all) =>
          accept !== undefined && accept.includes(OPENAPI_V2_PROTOBUF)
            ? { code: 200, contentType: OPENAPI_V2_PROTOBUF_RESPONSE, body: openApiV2Protobuf(all, gitVersion) }
            : json(200, openApiV2Json(all, gitVersion))))
      }
      if (root === "openapi" && rest[0] === "v3") {
        return reply(Effect.map(servedNow, (all) => openApiV3(all, gitVersion, rest.slice(1))))
      }
      if (root === "api") {
        if (rest.length === 0) {
          if (wantsAggregated(accept)) {
            return reply(
              Effect.map(servedIn("", "v1"), (core) => aggregatedDiscovery(core === undefined ? [] : [core]))
            )
          }
          return reply(Effect.succeed(json(200, {
            kind: "APIVersions",
            versions: ["v1"],
            serverAddressByClientCIDRs: [{ clientCIDR: "0.0.0.0/0", serverAddress: serverAddress() }]
          }, { vary: "Accept" })))
        }
        if (rest[0] !== "v1") return reply(Effect.succeed(pageNotFound))
        if (rest.length === 1) {
          return reply(Effect.map(servedIn("", "v1"), (core) => core === undefined ? pageNotFound : resourceList(core)))
        }
        return yield* resourceRoute("", "v1", rest.slice(1))
      }
      if (root === "apis") {
        if (rest.length === 0) {
          return reply(Effect.map(namedGroups, (all) =>
            wantsAggregated(accept)
              ? aggregatedDiscovery(all)
              : json(200, { kind: "APIGroupList", apiVersion: "v1", groups: all.map(apiGroup) }, { vary: "Accept" })))
        }
        const [group, version, ...more] = rest as [string, ...Array<string>]
        if (version === undefined) {
          return reply(
            Effect.map(
              findGroup(group),
              (g) => g === undefined ? pageNotFound : json(200, { kind: "APIGroup", apiVersion: "v1", ...apiGroup(g) })
            )
          )
        }
        if (more.length === 0) {
          return reply(
            Effect.map(
              findGroup(group),
              (g) => g === undefined || g.version !== version ? pageNotFound : resourceList(g)
            )
          )
        }
        return yield* resourceRoute(group, version, more)
      }
      return reply(Effect.succeed(pageNotFound))
    })

  const resourceRoute = (group: string, version: string, segments: ReadonlyArray<string>): Effect.Effect<Route> =>
    Effect.gen(function*() {
      const notFound: Route = { _tag: "Reply", reply: Effect.succeed(pageNotFound) }
      const known = resourcesIn(group, version)
      const find = (plural: string | undefined) => known.find((r) => r.plural === plural)
      let target: Target | undefined
      const [first, second, third, fourth, fifth, ...extra] = segments
      if (extra.length > 0) return notFound
      // `namespaces/<ns>/<plural>...` is a namespaced path unless it names a namespace's own subresource.
      const namespaced = first === "namespaces" && second !== undefined && third !== undefined &&
        find(third)?.namespaced === true
      if (namespaced) {
        target = { resource: find(third)!, namespace: second, name: fourth, subresource: fifth }
      } else if (fourth === undefined) {
        const resource = find(first)
        if (resource === undefined) return notFound
        // A namespaced type without a namespace lists or watches across all of them.
        if (resource.namespaced && second !== undefined) return notFound
        target = { resource, namespace: undefined, name: second, subresource: third }
      } else {
        return notFound
      }
      const subresource = target.subresource
      if (
        subresource !== undefined && !(subresource === "status" && target.resource.statusSubresource) &&
        !isTokenRequest(target.resource, subresource)
      ) {
        return notFound
      }
      return { _tag: "Resource", target } as Route
    })

  return route
}
