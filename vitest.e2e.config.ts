import { defineConfig } from "vitest/config"
import base from "./vitest.config.js"

/**
 * `npm run test:cluster`: the end-to-end journeys of test/e2e against the real cluster
 * `SESSION_ROUTING_E2E_KUBECONFIG` names (docs/e2e.md sets up kind for it). `npm test`
 * runs the same journeys against LocalCluster.
 */
if ((process.env.SESSION_ROUTING_E2E_KUBECONFIG ?? "").trim() === "") {
  throw new Error(
    "npm run test:cluster runs against a real cluster: set SESSION_ROUTING_E2E_KUBECONFIG to its admin kubeconfig " +
      "(docs/e2e.md creates one with kind); npm test runs the same journeys against LocalCluster"
  )
}

export default defineConfig({
  ...base,
  test: {
    ...base.test,
    include: ["test/e2e/**/*.test.ts"],
    // One cluster, one run at a time: the journeys share its namespace and its controllers.
    fileParallelism: false
  }
})
