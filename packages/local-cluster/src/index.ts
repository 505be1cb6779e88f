/**
 * @session-routing/local-cluster: an embedded Kubernetes API server on loopback, for
 * tests, demos and `session-routing cluster`. It serves what session routing touches
 * (core, networking, discovery, RBAC, Events, Leases, Gateway API) as the real API server
 * does on the wire, runs stand-in controllers for Ingress, Gateway, EndpointSlices
 * and garbage collection, and routes traffic for programmed hosts. It reaches the
 * library only through `session-routing/kubernetes`, as any KubeClient
 * implementation would.
 */

/** The cluster: its HTTP API on loopback, its store, and an in-memory KubeClient face. */
export { type ClusterHandle, kubeconfigFor, LocalCluster, type LocalClusterOptions } from "./LocalCluster.js"
/** A LocalCluster set up for session routing: namespace, classes, Gateway, controllers, data plane. */
export * as SessionCluster from "./SessionCluster.js"
/** The in-memory KubeClient over a cluster's store, with its faults and metrics. */
export * as InMemoryKubeClient from "./InMemoryKubeClient.js"
/** The stand-in Ingress and Gateway controllers, for a cluster assembled by hand. */
export * as GatewayController from "./GatewayController.js"
export * as IngressController from "./IngressController.js"
/** Session Pods as the demo runs them: the Pod object behind a session's Service. */
export { createSessionPod, type SessionPod } from "./SessionPods.js"
/** The traffic path of programmed hosts. */
export type { DataPlane } from "./DataPlane.js"
/** Credential files: 0600 from the first byte, renamed into place, never through a symlink. */
export { writeCredentialFile } from "./CredentialFile.js"
/** Who a kubeconfig authenticates as: a client certificate, a token, or an exec plugin. */
export { Credential } from "./ClusterAccess.js"
/** How long the stand-in controllers wait before they act. */
export type { ControllerDelay } from "./Reconciler.js"
/** Fault injection: errors, latency, hangs, resets, cut and expired watches. */
export { Fault, type FaultAction, type FaultSpec, type Verb } from "./Faults.js"
/** The server process itself: stop, pause, restart. */
export type { ServerLifecycle } from "./ServerLifecycle.js"
/** The store behind the API. */
export type { MemoryStore } from "./MemoryStore.js"
/** The checks a real API server applies to objects, worded as it words its 422s. */
export { type FieldError, validateObject } from "./Validation.js"
/** The cluster's certificate authority, for a test that needs certificates of its own. */
export { makeCertificateAuthority } from "./Pki.js"
