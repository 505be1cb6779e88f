/**
 * The test run Stryker repeats for every mutant (`npm run mutate`). It keeps the
 * in-process tests of the mutated core and leaves out what only costs time per
 * mutant: CLI tests that spawn processes, the fault matrix, the kubectl wire tests
 * and the property tests. The kubectl globalSetup stays: a runner test that ends with
 * `kubectl events` reads the bundled kubectl's path from it.
 */
import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    globalSetup: ["./test/support/KubectlGlobalSetup.ts"],
    exclude: [
      "**/node_modules/**",
      // Spawn the CLI or kubectl as processes: seconds each, per mutant.
      "test/cli/Cluster.test.ts",
      "test/cli/ClusterKubectl.test.ts",
      "test/cli/ProcessStop.test.ts",
      "test/cli/TracingProcess.test.ts",
      "test/cli/FaultMatrix*.test.ts",
      "test/cluster/Kubectl.test.ts",
      "test/cluster/KubectlAuth.test.ts",
      "test/cluster/KubectlWorkflows.test.ts",
      "test/cluster/KubectlWorkloads.test.ts",
      // Many generated cases each; the example-based tests cover the same code.
      "test/**/*.property.test.ts",
      "bench/**"
    ],
    testTimeout: 30_000,
    hookTimeout: 30_000
  }
})
