/**
 * Tables, for `kubectl get`: the columns the API server prints per type, and a list
 * or an object rendered as a `meta.k8s.io` Table when the client asks for one.
 */
import { apiVersionOf, type KubeObject } from "session-routing/kubernetes"
import type { ServedResource } from "../ServedResources.js"
import { isObject } from "../ServerSideApply.js"
import { workloadColumns } from "./workloadTables.js"

/** One column of a type's table: its definition and how a row's cell is read. */
export interface Column {
  readonly name: string
  readonly type: string
  readonly format?: string
  readonly description: string
  readonly priority?: number
  readonly cell: (object: Record<string, unknown>, now: number) => unknown
}

const path = (object: unknown, ...keys: ReadonlyArray<string | number>): unknown => {
  let current = object
  for (const key of keys) {
    if (typeof key === "number") current = Array.isArray(current) ? current[key] : undefined
    else current = isObject(current) ? current[key] : undefined
  }
  return current
}
const array = (value: unknown): ReadonlyArray<unknown> => (Array.isArray(value) ? value : [])

/** kubectl's `HumanDuration`: `45s`, `3m12s`, `25m`, `5h3m`, `12h`, `3d4h`, `95d`, `2y10d`. */
export const humanDuration = (seconds: number): string => {
  if (seconds < 0) return "<invalid>"
  if (seconds < 120) return `${Math.floor(seconds)}s`
  const minutes = Math.floor(seconds / 60)
  if (minutes < 10) return `${minutes}m${Math.floor(seconds % 60) > 0 ? `${Math.floor(seconds % 60)}s` : ""}`
  if (minutes < 180) return `${minutes}m`
  const hours = Math.floor(seconds / 3600)
  if (hours < 8) return `${hours}h${minutes % 60 > 0 ? `${minutes % 60}m` : ""}`
  if (hours < 48) return `${hours}h`
  const days = Math.floor(hours / 24)
  if (hours < 24 * 8) return `${days}d${hours % 24 > 0 ? `${hours % 24}h` : ""}`
  if (hours < 24 * 365 * 2) return `${days}d`
  const years = Math.floor(days / 365)
  if (hours < 24 * 365 * 8) return `${years}y${days % 365 > 0 ? `${days % 365}d` : ""}`
  return `${years}y`
}

const since = (timestamp: unknown, now: number): string => {
  if (typeof timestamp !== "string") return "<unknown>"
  const at = Date.parse(timestamp)
  return Number.isNaN(at) ? "<unknown>" : humanDuration((now - at) / 1000)
}

const age = (object: Record<string, unknown>, now: number): string =>
  since(path(object, "metadata", "creationTimestamp"), now)

const nameColumn: Column = {
  name: "Name",
  type: "string",
  format: "name",
  description: "Name must be unique within a namespace.",
  cell: (o) => path(o, "metadata", "name")
}
const ageColumn: Column = {
  name: "Age",
  type: "string",
  description: "CreationTimestamp is a timestamp representing the server time when this object was created.",
  cell: age
}

const addresses = (ingress: unknown): string =>
  array(ingress)
    .map((i) => path(i, "ip") ?? path(i, "hostname"))
    .filter((x): x is string => typeof x === "string")
    .join(",")

const conditionStatus = (conditions: unknown, type: string): string => {
  const c = array(conditions).find((x) => path(x, "type") === type)
  const s = path(c, "status")
  return typeof s === "string" ? s : "Unknown"
}

const servicePorts = (o: Record<string, unknown>): string => {
  const ports = array(path(o, "spec", "ports")).map((p) => {
    const port = path(p, "port")
    const nodePort = path(p, "nodePort")
    const protocol = path(p, "protocol") ?? "TCP"
    return `${String(port)}${typeof nodePort === "number" ? `:${nodePort}` : ""}/${String(protocol)}`
  })
  return ports.length === 0 ? "<none>" : ports.join(",")
}

const columnsFor = (resource: ServedResource<unknown>): ReadonlyArray<Column> => {
  switch (resource.kind) {
    case "Namespace":
      return [nameColumn, {
        name: "Status",
        type: "string",
        description: "The status of the namespace",
        cell: (o) => path(o, "status", "phase") ?? ""
      }, ageColumn]
    case "Service":
      return [
        nameColumn,
        {
          name: "Type",
          type: "string",
          description: "The type of service.",
          cell: (o) => path(o, "spec", "type") ?? ""
        },
        {
          name: "Cluster-IP",
          type: "string",
          description: "The cluster IP of the service.",
          cell: (o) => path(o, "spec", "clusterIP") ?? "<none>"
        },
        {
          name: "External-IP",
          type: "string",
          description: "The external IP of the service.",
          cell: (o) =>
            addresses(path(o, "status", "loadBalancer", "ingress")) ||
            (path(o, "spec", "type") === "LoadBalancer" ? "<pending>" : "<none>")
        },
        { name: "Port(s)", type: "string", description: "The ports of the service.", cell: servicePorts },
        ageColumn,
        {
          name: "Selector",
          type: "string",
          priority: 1,
          description: "The selector of the service.",
          cell: (o) => {
            const selector = path(o, "spec", "selector")
            return isObject(selector) && Object.keys(selector).length > 0
              ? Object.entries(selector).map(([k, v]) => `${k}=${String(v)}`).join(",")
              : "<none>"
          }
        }
      ]
    case "Ingress":
      return [
        nameColumn,
        {
          name: "Class",
          type: "string",
          description: "The name of the IngressClass.",
          cell: (o) => path(o, "spec", "ingressClassName") ?? "<none>"
        },
        {
          name: "Hosts",
          type: "string",
          description: "Hosts the Ingress serves.",
          cell: (o) => {
            const hosts = array(path(o, "spec", "rules")).map((r) => path(r, "host")).filter((h): h is string =>
              typeof h === "string" && h !== ""
            )
            return hosts.length === 0 ? "*" : hosts.join(",")
          }
        },
        {
          name: "Address",
          type: "string",
          description: "Address is a list of IPs or hostnames.",
          cell: (o) => addresses(path(o, "status", "loadBalancer", "ingress"))
        },
        {
          name: "Ports",
          type: "string",
          description: "Ports of TLS configurations that open.",
          cell: (o) => (array(path(o, "spec", "tls")).length > 0 ? "80, 443" : "80")
        },
        ageColumn
      ]
    case "IngressClass":
      return [
        nameColumn,
        {
          name: "Controller",
          type: "string",
          description: "Controller that is responsible for handling this class.",
          cell: (o) => path(o, "spec", "controller") ?? ""
        },
        {
          name: "Parameters",
          type: "string",
          description: "A reference to a resource with additional parameters.",
          cell: (o) => {
            const p = path(o, "spec", "parameters")
            return isObject(p) ? `${String(p.kind)}/${String(p.name)}` : "<none>"
          }
        },
        ageColumn
      ]
    // The Gateway API CRDs' additionalPrinterColumns, in their order.
    case "GatewayClass":
      return [
        nameColumn,
        { name: "Controller", type: "string", description: "", cell: (o) => path(o, "spec", "controllerName") ?? "" },
        {
          name: "Accepted",
          type: "string",
          description: "",
          cell: (o) => conditionStatus(path(o, "status", "conditions"), "Accepted")
        },
        ageColumn,
        // A path that finds nothing is a null cell, as the API server sends for a CRD (kubectl prints it blank).
        {
          name: "Description",
          type: "string",
          description: "",
          priority: 1,
          cell: (o) => path(o, "spec", "description") ?? null
        }
      ]
    case "Gateway":
      return [
        nameColumn,
        { name: "Class", type: "string", description: "", cell: (o) => path(o, "spec", "gatewayClassName") ?? "" },
        {
          name: "Address",
          type: "string",
          description: "",
          cell: (o) => path(o, "status", "addresses", 0, "value") ?? ""
        },
        {
          name: "Programmed",
          type: "string",
          description: "",
          cell: (o) => conditionStatus(path(o, "status", "conditions"), "Programmed")
        },
        ageColumn
      ]
    case "Lease":
      return [nameColumn, {
        name: "Holder",
        type: "string",
        description: "Who holds the lease now.",
        cell: (o) => path(o, "spec", "holderIdentity") ?? ""
      }, ageColumn]
    case "HTTPRoute":
      return [
        nameColumn,
        {
          name: "Hostnames",
          type: "string",
          description: "",
          cell: (o) => JSON.stringify(array(path(o, "spec", "hostnames")))
        },
        ageColumn
      ]
    default:
      return workloadColumns(resource.group, resource.kind, { name: nameColumn, age: ageColumn, since }) ??
        [nameColumn, ageColumn]
  }
}

export const wantsTable = (accept: string | undefined): boolean =>
  accept !== undefined &&
  accept.split(",").some((part) => /;\s*as=Table/.test(part) && /;\s*g=meta\.k8s\.io/.test(part))

export const tableApiVersion = (accept: string): string =>
  accept.split(",").find((p) => /;\s*as=Table/.test(p) && /;\s*v=v1(;|$|\s)/.test(p)) !== undefined
    ? "meta.k8s.io/v1"
    : "meta.k8s.io/v1beta1"

export const toTable = (
  resource: ServedResource<unknown>,
  objects: ReadonlyArray<KubeObject>,
  listMeta: Record<string, unknown>,
  includeObject: string,
  apiVersion: string,
  now: number
) => {
  const columns = columnsFor(resource)
  return {
    kind: "Table",
    apiVersion,
    metadata: listMeta,
    columnDefinitions: columns.map((c) => ({
      name: c.name,
      type: c.type,
      format: c.format ?? "",
      description: c.description,
      priority: c.priority ?? 0
    })),
    rows: objects.map((object) => {
      const full = { apiVersion: apiVersionOf(resource), kind: resource.kind, ...object } as Record<string, unknown>
      return {
        cells: columns.map((c) => c.cell(full, now)),
        object: includeObject === "None"
          ? null
          : includeObject === "Object"
          ? full
          : { kind: "PartialObjectMetadata", apiVersion: "meta.k8s.io/v1", metadata: full.metadata }
      }
    })
  }
}
