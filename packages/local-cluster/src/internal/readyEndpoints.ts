/**
 * Where a routed Service port sends traffic, as a real proxy reads it from
 * EndpointSlices: only to endpoints whose `ready` condition holds. A Service no Pod
 * stands behind is left to the data plane's registered backends.
 */
import type { EndpointSlice, Pod, Service } from "session-routing/kubernetes"
import { SERVICE_NAME_LABEL } from "../EndpointSliceController.js"

/** One ready endpoint of a Service port: the Pod it names and where it listens. */
export interface ReadyEndpoint {
  readonly pod: { readonly namespace: string; readonly name: string } | undefined
  readonly address: string
  readonly port: number | undefined
}

export type EndpointChoice =
  /** No Pod matches the Service's selector (or it has none): registered backends decide. */
  | { readonly _tag: "NoPods" }
  | { readonly _tag: "NoneReady"; readonly message: string }
  | { readonly _tag: "Ready"; readonly endpoints: ReadonlyArray<ReadyEndpoint> }

const matches = (
  selector: Readonly<Record<string, string>>,
  labels: Readonly<Record<string, string>> | undefined
): boolean => Object.entries(selector).every(([k, v]) => labels?.[k] === v)

/** The Pods named in a message: a few, then how many more. */
const podList = (pods: ReadonlyArray<Pod>): string => {
  const names = pods.slice(0, 3).map((pod) => `${pod.metadata?.namespace ?? ""}/${pod.metadata?.name ?? ""}`)
  const more = pods.length > names.length ? ` and ${pods.length - names.length} more` : ""
  return `${pods.length === 1 ? "Pod" : "Pods"} ${names.join(", ")}${more}`
}

/**
 * The ready endpoints of `service`'s `port`, from the Pods and slices of its namespace.
 * `hasWorkload` says whether something serves a Pod: LocalCluster runs no containers, so
 * a Pod is served only where a workload was registered for it.
 */
export const readyEndpoints = (
  service: Service | undefined,
  port: number,
  pods: ReadonlyArray<Pod>,
  slices: ReadonlyArray<EndpointSlice>,
  hasWorkload: (pod: Pod) => boolean = () => true
): EndpointChoice => {
  const selector = service?.spec?.selector ?? {}
  if (service === undefined || Object.keys(selector).length === 0) return { _tag: "NoPods" }
  const selected = pods.filter((pod) => matches(selector, pod.metadata?.labels))
  if (selected.length === 0) return { _tag: "NoPods" }
  const name = service.metadata?.name ?? ""
  const servicePort = (service.spec?.ports ?? []).find((p) => p.port === port)
  const own = slices.filter((slice) => slice.metadata?.labels?.[SERVICE_NAME_LABEL] === name)
  const endpoints = own
    .flatMap((slice) => {
      const slicePort = (slice.ports ?? []).find((p) => (p.name ?? "") === (servicePort?.name ?? ""))
      if (slicePort === undefined) return []
      // A missing `ready` is to be read as ready; the controller always writes it.
      return (slice.endpoints ?? [])
        .filter((e) => e.conditions?.ready !== false && e.addresses.length > 0)
        .map((e): ReadyEndpoint => ({
          pod: e.targetRef?.kind === "Pod" && e.targetRef.name !== undefined
            ? { namespace: e.targetRef.namespace ?? slice.metadata?.namespace ?? "", name: e.targetRef.name }
            : undefined,
          address: e.addresses[0]!,
          port: slicePort.port
        }))
    })
  if (endpoints.length > 0) return { _tag: "Ready", endpoints }
  const namespace = service.metadata?.namespace ?? ""
  const unserved = selected.filter((pod) => !hasWorkload(pod))
  // The cause before its symptoms: a Pod nothing runs never turns Ready, slices or not.
  if (unserved.length === selected.length) {
    return {
      _tag: "NoneReady",
      message: `no ready endpoints for Service ${namespace}/${name} port ${port}: ${
        podList(unserved)
      } selected, but LocalCluster runs no containers and no workload is registered for ${
        unserved.length === 1 ? "it" : "them"
      } (DataPlane.registerPod serves a Pod at an address and makes it Ready)`
    }
  }
  const chosen = `${selected.length} ${selected.length === 1 ? "Pod" : "Pods"} selected`
  return {
    _tag: "NoneReady",
    // No slice at all: nothing keeps them, which in LocalCluster means the controller manager is off.
    message: own.length === 0
      ? `no endpoints for Service ${namespace}/${name} port ${port} (${chosen}, but no EndpointSlice lists them: is the EndpointSlice controller running?)`
      : `no ready endpoints for Service ${namespace}/${name} port ${port} (${chosen}, none Ready)`
  }
}
