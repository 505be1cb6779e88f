/**
 * The test run Stryker repeats for every mutant (`npm run mutate`). It keeps the
 * in-process tests of the mutated core and leaves out what only costs time per
 * mutant: CLI tests that spawn processes, the fault matrix, the kubectl wire tests
 * and the property tests. The kubectl globalSetup stays (the unpack is cached): a
 * test file that is left in may still ask for the bundled kubectl's path.
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
      "test/cluster/Kubectl*.test.ts",
      "test/runner/RouteFollowUpsKubectl.test.ts",
      // Many generated cases each; the example-based tests cover the same code.
      "test/**/*.property.test.ts",
      "bench/**"
    ],
    testTimeout: 30_000,
    hookTimeout: 30_000
  }
})
