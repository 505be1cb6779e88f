/**
 * The types LocalCluster knows from one description each, and what is derived from
 * them: the structural shape server-side apply, pruning, defaulting and the OpenAPI
 * documents read, the field docs those documents carry, and, for custom resources,
 * the CRD schema validation checks.
 */
import type { ServedResource } from "../ServedResources.js"
import type { ObjectSchema } from "./crdSchema.js"
import { gatewayClassDescription, gatewayDescription } from "./gatewayDescriptions.js"
import { httpRouteDescription } from "./httpRouteDescription.js"
import { ingressClassDescription, ingressDescription } from "./ingressDescriptions.js"
import { leaseDescription } from "./leaseDescription.js"
import type { Shape } from "./shape.js"
import { type KindDescription, kindDocs, kindSchema, kindShape } from "./typeDescription.js"
import {
  endpointSliceDescription,
  eventDescription,
  eventV1Description,
  podDescription
} from "./workloadDescriptions.js"

const descriptions: ReadonlyArray<readonly [string, KindDescription]> = [
  ["ingresses.networking.k8s.io", ingressDescription],
  ["ingressclasses.networking.k8s.io", ingressClassDescription],
  ["pods", podDescription],
  ["events", eventDescription],
  ["events.events.k8s.io", eventV1Description],
  ["endpointslices.discovery.k8s.io", endpointSliceDescription],
  ["gateways.gateway.networking.k8s.io", gatewayDescription],
  ["gatewayclasses.gateway.networking.k8s.io", gatewayClassDescription],
  ["httproutes.gateway.networking.k8s.io", httpRouteDescription],
  ["leases.coordination.k8s.io", leaseDescription]
]

/** The shape of each described type, by `<plural>[.<group>]`. */
export const describedShapes: ReadonlyArray<readonly [string, Shape]> = descriptions.map((
  [name, description]
) => [name, kindShape(description)])

const schemas: ReadonlyMap<string, ObjectSchema> = new Map(
  descriptions.map(([name, description]) => [name, kindSchema(description)])
)

const docs: ReadonlyMap<string, Readonly<Record<string, string>>> = new Map(
  descriptions.map(([name, description]) => [name, kindDocs(description)])
)

/** What a described type's fields mean, by field path, for the OpenAPI `description`s. */
export const docsFor = (qualifiedName: string): Readonly<Record<string, string>> => docs.get(qualifiedName) ?? {}

/** The CRD schema of a custom resource LocalCluster serves; undefined for the built-in types. */
export const schemaFor = (resource: ServedResource<unknown>): ObjectSchema | undefined =>
  resource.custom ? schemas.get(`${resource.plural}.${resource.group}`) : undefined
