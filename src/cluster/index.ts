/**
 * LocalCluster, the embedded Kubernetes API for tests, demos and `session-routing
 * cluster`, as its own entry point: `import { LocalCluster } from
 * "session-routing/local-cluster"`. The library's main entry never loads it (nor its
 * HTTP server, SSA engine or YAML), and it reaches the library only through the
 * `KubeClient` contract and the shared domain, as a real cluster would.
 */

/** An embedded Kubernetes API over HTTP on loopback, with an in-memory KubeClient face. */
export { LocalCluster, type LocalClusterOptions } from "./LocalCluster.js"
/** A LocalCluster set up for session routing: namespace, classes, Gateway, controllers, data plane. */
export * as SessionCluster from "./SessionCluster.js"
/** Fault injection: errors, latency, hangs, resets, cut and expired watches, and the server process itself. */
export { Fault, type FaultSpec } from "./Faults.js"
/** The checks a real API server applies to objects, worded as it words its 422s. */
export { type FieldError, validateObject } from "./Validation.js"
