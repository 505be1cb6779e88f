import { defineConfig } from "vitest/config"
import base from "./vitest.config.js"

/**
 * `npm run test:slow`: the runs that cost minutes rather than seconds, kept out of
 * `npm test` so that it answers while one works, and run by CI beside it: churn and
 * memory at scale, the fault and secrets matrices, controllers as competing processes,
 * the packed packages installed into a fresh project, and the property tests' many
 * generated cases. A file is slow by its name, `*.slow.test.ts`.
 */
export default defineConfig({
  ...base,
  test: {
    ...base.test,
    include: ["test/**/*.slow.test.ts", "packages/*/test/**/*.slow.test.ts"],
    exclude: [...(base.test?.exclude ?? []).filter((pattern) => pattern !== "**/*.slow.test.ts")]
  }
})
