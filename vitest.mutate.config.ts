/**
 * The test run Stryker repeats for every mutant (`npm run mutate`). It keeps the
 * in-process tests of the mutated core and leaves out what only costs time per
 * mutant: CLI tests that spawn processes, the fault matrix, the kubectl wire tests
 * and the property tests. The kubectl globalSetup stays (the unpack is cached): a
 * test file that is left in may still ask for the bundled kubectl's path.
 */
import { defineConfig } from "vitest/config"
import { sourceAliases } from "./vitest.config.js"

export default defineConfig({
  resolve: { alias: sourceAliases },
  test: {
    include: ["test/**/*.test.ts", "packages/*/test/**/*.test.ts"],
    globalSetup: ["./test/support/KubectlGlobalSetup.ts"],
    exclude: [
      "**/node_modules/**",
      // Spawn the CLI or kubectl as processes: seconds each, per mutant.
      "test/cli/Cluster.test.ts",
      "test/**/*.slow.test.ts",
      "test/cli/ClusterKubectl.test.ts",
      "test/cli/ProcessStop.test.ts",
      "test/cli/TracingProcess.test.ts",
      "test/cli/JsonStdout.test.ts",
      "packages/local-cluster/test/Kubectl*.test.ts",
      "test/runner/RouteFollowUpsKubectl.test.ts",
      // Many generated cases each; the example-based tests cover the same code.
      "test/**/*.property.test.ts",
      "bench/**"
    ],
    testTimeout: 30_000,
    hookTimeout: 30_000
  }
})
