import { defineConfig } from "vitest/config"
import base from "./vitest.config.js"

/**
 * `npm run test:cluster`: the end-to-end journeys of test/e2e and the API contract of
 * test/contract against a real API server, and the `*.cluster.test.ts` files, which need
 * Go or the real control plane.
 * With no `SESSION_ROUTING_E2E_KUBECONFIG`, against the real control plane this run starts
 * (test/control-plane, built first if it is not: docs/e2e.md); with it, against that
 * cluster. `npm test` runs the same journeys against LocalCluster.
 */
export default defineConfig({
  ...base,
  test: {
    ...base.test,
    include: [
      "test/e2e/**/*.test.ts",
      "test/contract/**/*.test.ts",
      "test/**/*.cluster.test.ts",
      "packages/*/test/**/*.cluster.test.ts"
    ],
    exclude: [...(base.test?.exclude ?? []).filter((pattern) => pattern !== "**/*.cluster.test.ts")],
    globalSetup: [...(base.test?.globalSetup as Array<string>), "./test/e2e/ControlPlaneGlobalSetup.ts"],
    // One cluster, one run at a time: the journeys share its namespace and its controllers.
    fileParallelism: false
  }
})
