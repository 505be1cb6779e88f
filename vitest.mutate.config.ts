/**
 * The test run Stryker repeats for every mutant (`npm run mutate`). It keeps the
 * in-process tests of the mutated core and leaves out what only costs time per
 * mutant: CLI tests that spawn processes, the fault matrix, the kubectl wire tests
 * (every file of test/cluster/Kubectl*) and the property tests.
 */
import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // A kubectl check inside a wider test file (RouteFollowUpsCluster) still needs the
    // unpacked kubectl's path; the unpack is cached, so this costs nothing per run.
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
      // Many generated cases each; the example-based tests cover the same code.
      "test/**/*.property.test.ts",
      "bench/**"
    ],
    testTimeout: 30_000,
    hookTimeout: 30_000
  }
})
