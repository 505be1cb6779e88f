/**
 * Calls through @kubernetes/client-node's typed APIs, one family of calls per kind
 * of resource (core, networking, custom objects), each keeping the server's raw
 * answer: the typed APIs turn answers into model instances that drop what they do
 * not know, and the library returns the server's own JSON.
 */
import * as k8s from "@kubernetes/client-node"
import { Effect } from "effect"
import type { KubeObject } from "../../domain/Objects.js"
import { apiVersionOf, qualifiedName, type ResourceType } from "../../domain/Resources.js"
import { FIELD_MANAGER } from "../../services/KubeClient.js"
import { describeRequest, type KubeError, type RequestContext, Unexpected } from "../../services/KubeError.js"
import { apiConfiguration, type ConnectionPools } from "./ConnectionPool.js"

/** What the typed APIs get to deserialise in place of a successful answer. */
const EMPTY_OBJECT = "{}"

/**
 * Per-call middleware: `pre` hands the fiber's abort signal to the request, so
 * interrupting the fiber cancels it; `post` keeps the raw body, because the typed
 * APIs turn answers into model instances (timestamps become Dates, unknown fields
 * vanish) and error bodies into whatever `getBodyAsAny` makes of them.
 *
 * The typed API is handed an empty object in place of a successful body: the answer
 * is the raw text, parsed once by the caller. Deserialising it into models as well
 * made a list of 300 Ingresses cost 1.4 to 1.8 times the CPU (paired runs).
 */
export const callMiddleware = (
  signal: AbortSignal,
  captured: { text?: string; code?: number }
): k8s.ObservableMiddleware => ({
  pre: (request) => {
    request.setSignal(signal)
    return new k8s.Observable(Promise.resolve(request))
  },
  post: (response) =>
    new k8s.Observable(
      response.body.text().then((text) => {
        captured.text = text
        captured.code = response.httpStatusCode
        const handed = response.httpStatusCode >= 200 && response.httpStatusCode < 300 ? EMPTY_OBJECT : text
        return new k8s.ResponseContext(response.httpStatusCode, response.headers, {
          text: () => Promise.resolve(handed),
          binary: () => Promise.resolve(Buffer.from(handed))
        })
      })
    )
})

export interface Family {
  readonly apply: (
    namespace: string,
    name: string,
    body: KubeObject,
    params: { readonly dryRun?: string; readonly force: boolean },
    options: k8s.ConfigurationOptions
  ) => Promise<unknown>
  readonly get: (namespace: string, name: string, options: k8s.ConfigurationOptions) => Promise<unknown>
  readonly delete: (namespace: string, name: string, options: k8s.ConfigurationOptions) => Promise<unknown>
  readonly list: (
    namespace: string,
    labelSelector: string | undefined,
    options: k8s.ConfigurationOptions
  ) => Promise<unknown>
}

const selector = (labelSelector: string | undefined) => (labelSelector !== undefined ? { labelSelector } : {})

export const families = (kc: k8s.KubeConfig, server: string, pools: ConnectionPools) => {
  const configuration = apiConfiguration(kc, server, pools)
  const core = new k8s.CoreV1Api(configuration)
  const networking = new k8s.NetworkingV1Api(configuration)
  const custom = new k8s.CustomObjectsApi(configuration)
  const services: Family = {
    apply: (namespace, name, body, params, options) =>
      core.patchNamespacedService({ namespace, name, body, fieldManager: FIELD_MANAGER, ...params }, options),
    get: (namespace, name, options) => core.readNamespacedService({ namespace, name }, options),
    delete: (namespace, name, options) => core.deleteNamespacedService({ namespace, name }, options),
    list: (namespace, labelSelector, options) =>
      core.listNamespacedService({ namespace, ...selector(labelSelector) }, options)
  }
  const ingresses: Family = {
    apply: (namespace, name, body, params, options) =>
      networking.patchNamespacedIngress({ namespace, name, body, fieldManager: FIELD_MANAGER, ...params }, options),
    get: (namespace, name, options) => networking.readNamespacedIngress({ namespace, name }, options),
    delete: (namespace, name, options) => networking.deleteNamespacedIngress({ namespace, name }, options),
    list: (namespace, labelSelector, options) =>
      networking.listNamespacedIngress({ namespace, ...selector(labelSelector) }, options)
  }
  const customFamily = (resource: ResourceType<unknown>): Family => {
    const { group, plural, version } = resource
    return {
      apply: (namespace, name, body, params, options) =>
        custom.patchNamespacedCustomObject(
          { group, version, plural, namespace, name, body, fieldManager: FIELD_MANAGER, ...params },
          options
        ),
      get: (namespace, name, options) =>
        custom.getNamespacedCustomObject({ group, version, plural, namespace, name }, options),
      delete: (namespace, name, options) =>
        custom.deleteNamespacedCustomObject({ group, version, plural, namespace, name }, options),
      list: (namespace, labelSelector, options) =>
        custom.listNamespacedCustomObject({ group, version, plural, namespace, ...selector(labelSelector) }, options)
    }
  }
  // Cluster-scoped custom resources (GatewayClass): the namespace argument is ignored.
  const clusterCustomFamily = (resource: ResourceType<unknown>): Family => {
    const { group, plural, version } = resource
    return {
      apply: (_namespace, name, body, params, options) =>
        custom.patchClusterCustomObject(
          { group, version, plural, name, body, fieldManager: FIELD_MANAGER, ...params },
          options
        ),
      get: (_namespace, name, options) => custom.getClusterCustomObject({ group, version, plural, name }, options),
      delete: (_namespace, name, options) =>
        custom.deleteClusterCustomObject({ group, version, plural, name }, options),
      list: (_namespace, labelSelector, options) =>
        custom.listClusterCustomObject({ group, version, plural, ...selector(labelSelector) }, options)
    }
  }
  // Read only: the KubeClient types admit no write of these, so apply and delete cannot be reached.
  const readOnly = (
    get: Family["get"],
    list: Family["list"]
  ): Family => ({
    apply: () => Promise.reject(new Error("read-only resource")),
    delete: () => Promise.reject(new Error("read-only resource")),
    get,
    list
  })
  const namespaces = readOnly(
    (_namespace, name, options) => core.readNamespace({ name }, options),
    (_namespace, labelSelector, options) => core.listNamespace({ ...selector(labelSelector) }, options)
  )
  const ingressClasses = readOnly(
    (_namespace, name, options) => networking.readIngressClass({ name }, options),
    (_namespace, labelSelector, options) => networking.listIngressClass({ ...selector(labelSelector) }, options)
  )
  const discovery = new k8s.DiscoveryV1Api(configuration)
  const endpointSlices = readOnly(
    (namespace, name, options) => discovery.readNamespacedEndpointSlice({ namespace, name }, options),
    (namespace, labelSelector, options) =>
      discovery.listNamespacedEndpointSlice({ namespace, ...selector(labelSelector) }, options)
  )
  return (resource: ResourceType<unknown>): Effect.Effect<Family> => {
    if (resource.group === "discovery.k8s.io" && resource.plural === "endpointslices") {
      return Effect.succeed(endpointSlices)
    }
    if (resource.group === "" && resource.plural === "services") return Effect.succeed(services)
    if (resource.group === "" && resource.plural === "namespaces") return Effect.succeed(namespaces)
    if (resource.group === "networking.k8s.io" && resource.plural === "ingresses") return Effect.succeed(ingresses)
    if (resource.group === "networking.k8s.io" && resource.plural === "ingressclasses") {
      return Effect.succeed(ingressClasses)
    }
    if (resource.custom) {
      return Effect.succeed(resource.namespaced ? customFamily(resource) : clusterCustomFamily(resource))
    }
    // The KubeClient types admit only Services, Ingresses and Gateway API kinds:
    // anything else is a programming error, not a cluster answer.
    return Effect.dieMessage(`KubeClientLive does not handle ${qualifiedName(resource)}`)
  }
}

export const parseJson = (
  ctx: RequestContext,
  server: string,
  text: string | undefined
): Effect.Effect<unknown, KubeError> =>
  Effect.try({
    try: () => JSON.parse(text ?? "") as unknown,
    catch: () =>
      new Unexpected({
        reason: `the API server at ${server} answered ${describeRequest(ctx)} with a body that is not JSON`
      })
  })

/** Built-in list items come without kind/apiVersion; give them back so items read like `get` answers. */
export const withTypeMeta = <A>(resource: ResourceType<A>, item: A): A => ({
  apiVersion: apiVersionOf(resource),
  kind: resource.kind,
  ...item
})

/** A server-side apply body refuses managedFields; one read back from the server carries them. */
export const applyBody = (resource: ResourceType<unknown>, object: KubeObject): KubeObject => {
  const { managedFields: _managedFields, ...metadata } = object.metadata ?? {}
  return {
    ...object,
    apiVersion: object.apiVersion ?? apiVersionOf(resource),
    kind: object.kind ?? resource.kind,
    metadata
  }
}
