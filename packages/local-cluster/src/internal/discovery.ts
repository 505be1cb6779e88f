/**
 * Discovery as the API server answers it, from one listing of what is served per
 * group version: the legacy documents (APIGroupList, APIGroup, APIResourceList) and
 * the aggregated one (`apidiscovery.k8s.io/v2` APIGroupDiscoveryList) that kubectl
 * 1.26 and later ask `/api` and `/apis` for first, so that one request lists everything.
 */
import type { ServedResource } from "../ServedResources.js"
import { isTokenRequest, TOKEN_SUBRESOURCE, tokenRequestDiscovery } from "../TokenRequest.js"
import { json, type Reply } from "./httpReply.js"

/** One resource or subresource as an APIResourceList names it. */
export interface ApiResource {
  readonly name: string
  readonly singularName: string
  readonly namespaced: boolean
  /** A subresource that takes and answers another group's kind names it (`authentication.k8s.io`). */
  readonly group?: string
  readonly version?: string
  readonly kind: string
  readonly verbs: ReadonlyArray<string>
  readonly shortNames?: ReadonlyArray<string>
  readonly categories?: ReadonlyArray<string>
}

/** What one group version serves now; `group` is `""` for the core group. */
export interface ServedGroupVersion {
  readonly group: string
  readonly version: string
  /** Whether its kinds are custom resources, whose discovery names their group and version. */
  readonly custom: boolean
  readonly resources: ReadonlyArray<ApiResource>
}

const STATUS_VERBS = ["get", "patch", "update"]
const verbsOf = (resource: ServedResource<unknown>): Array<string> =>
  resource.plural === "namespaces"
    ? ["create", "delete", "get", "list", "patch", "update", "watch"]
    : ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"]

const apiResource = (resource: ServedResource<unknown>): ApiResource => ({
  name: resource.plural,
  singularName: resource.singular,
  namespaced: resource.namespaced,
  kind: resource.kind,
  verbs: verbsOf(resource),
  ...(resource.shortNames.length > 0 ? { shortNames: resource.shortNames } : {}),
  ...(resource.custom
    ? { categories: ["gateway-api"] }
    : resource.group === "" && (resource.kind === "Service" || resource.kind === "Pod")
    ? { categories: ["all"] }
    : {})
})

/** The stored types' entries: each type, then its subresources (status, a ServiceAccount's token). */
export const apiResourcesOf = (resources: ReadonlyArray<ServedResource<unknown>>): Array<ApiResource> =>
  resources.flatMap((r) => [
    apiResource(r),
    ...(r.statusSubresource
      ? [{ name: `${r.plural}/status`, singularName: "", namespaced: r.namespaced, kind: r.kind, verbs: STATUS_VERBS }]
      : []),
    ...(isTokenRequest(r, TOKEN_SUBRESOURCE) ? [tokenRequestDiscovery] : [])
  ])

const groupVersion = (served: ServedGroupVersion) => ({
  groupVersion: `${served.group}/${served.version}`,
  version: served.version
})

/** A named group as `/apis` lists it and `/apis/<group>` answers it: one version, preferred. */
export const apiGroup = (served: ServedGroupVersion) => ({
  name: served.group,
  versions: [groupVersion(served)],
  preferredVersion: groupVersion(served)
})

/** `/api/v1` or `/apis/<group>/<version>`. */
export const resourceList = (served: ServedGroupVersion): Reply =>
  json(200, {
    kind: "APIResourceList",
    ...(served.group === "" ? {} : { apiVersion: "v1" }),
    groupVersion: served.group === "" ? served.version : `${served.group}/${served.version}`,
    resources: served.resources
  })

// -- aggregated discovery ----------------------------------------------------

/** The media type of aggregated discovery, asked for in `Accept` and answered in `Content-Type`. */
export const AGGREGATED_DISCOVERY = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"

/**
 * Whether `accept` takes aggregated discovery v2. Clients that do also take the
 * legacy JSON (kubectl lists it last), so anything short of an exact v2 range gets that.
 */
export const wantsAggregated = (accept: string | undefined): boolean =>
  (accept ?? "").split(",").some((range) => {
    const [type, ...parameters] = range.split(";").map((part) => part.trim())
    const params = new Map(parameters.map((p) => {
      const at = p.indexOf("=")
      return [p.slice(0, at).trim().toLowerCase(), p.slice(at + 1).trim()] as const
    }))
    return type?.toLowerCase() === "application/json" && params.get("g") === "apidiscovery.k8s.io" &&
      params.get("v") === "v2" && params.get("as") === "APIGroupDiscoveryList" && params.get("q") !== "0"
  })

/**
 * One group version's resources as aggregated discovery gives them: each with its
 * subresources inside it, scope spelled out, and the kind it answers with (left blank
 * for built-in types, which answer with their own group version).
 */
const aggregatedVersion = (served: ServedGroupVersion) => {
  const responseKind = (kind: string) =>
    served.custom ? { group: served.group, version: served.version, kind } : { group: "", version: "", kind }
  const resources = served.resources.filter((r) => !r.name.includes("/")).map((r) => {
    const subresources = served.resources.filter((s) => s.name.startsWith(`${r.name}/`))
    return {
      resource: r.name,
      responseKind: responseKind(r.kind),
      scope: r.namespaced ? "Namespaced" : "Cluster",
      singularResource: r.singularName,
      verbs: r.verbs,
      ...(r.shortNames !== undefined ? { shortNames: r.shortNames } : {}),
      ...(r.categories !== undefined ? { categories: r.categories } : {}),
      ...(subresources.length > 0
        ? {
          subresources: subresources.map((s) => ({
            subresource: s.name.slice(r.name.length + 1),
            responseKind: s.group !== undefined
              ? { group: s.group, version: s.version ?? "", kind: s.kind }
              : responseKind(s.kind),
            verbs: s.verbs
          }))
        }
        : {})
    }
  })
  return { version: served.version, resources, freshness: "Current" }
}

/** `/api` or `/apis` as an APIGroupDiscoveryList: every group served there, with every resource of it. */
export const aggregatedDiscovery = (served: ReadonlyArray<ServedGroupVersion>): Reply => ({
  code: 200,
  contentType: AGGREGATED_DISCOVERY,
  body: JSON.stringify({
    kind: "APIGroupDiscoveryList",
    apiVersion: "apidiscovery.k8s.io/v2",
    metadata: {},
    items: served.map((gv) => ({
      metadata: { ...(gv.group === "" ? {} : { name: gv.group }), creationTimestamp: null },
      versions: [aggregatedVersion(gv)]
    }))
  }),
  headers: { vary: "Accept" }
})
