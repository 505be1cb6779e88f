// Mutation testing of the core (`npm run mutate`); not part of `npm test`.
// Stryker 9.6 is the last line that runs on Node 20. The per-mutant test run is
// vitest.mutate.config.ts, which leaves out process-spawning and property tests.
/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: "vitest",
  vitest: {
    configFile: "vitest.mutate.config.ts",
    // Run only the test files that import the mutated file.
    related: true
  },
  checkers: ["typescript"],
  tsconfigFile: "tsconfig.json",
  // A mutant the type checker refuses is not run (it counts as a compile error).
  typescriptChecker: { prioritizePerformanceOverAccuracy: true },
  mutate: [
    "src/domain/**/*.ts",
    "src/health/**/*.ts",
    "src/runner/**/*.ts",
    // In src/layers: the routers and their steps, retry, the two status sources, transport errors.
    "src/layers/SessionRouter.ts",
    "src/layers/sessionRouter/**/*.ts",
    "src/layers/KubeRetry.ts",
    "src/layers/routeStatusSource/**/*.ts",
    "src/layers/kubeClient/TransportErrors.ts"
  ],
  coverageAnalysis: "perTest",
  incremental: true,
  incrementalFile: "reports/stryker-incremental.json",
  concurrency: 2,
  timeoutMS: 20000,
  reporters: ["html", "json", "clear-text", "progress"],
  htmlReporter: { fileName: "reports/mutation/mutation.html" },
  jsonReporter: { fileName: "reports/mutation/mutation.json" },
  // Informational: the score is reported, never fails the run.
  thresholds: { high: 90, low: 75, break: null },
  tempDirName: ".stryker-tmp",
  cleanTempDir: "always"
}
