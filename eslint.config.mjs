// Lint for `npm test`: Effect's own formatting (dprint, as the Effect repositories
// configure it) and the house's layering, enforced as import boundaries instead of
// being left to prose (see CONTRIBUTING.md, "Layout").
import * as effectEslint from "@effect/eslint-plugin"
import tseslint from "typescript-eslint"

/** Modules a layer of the library may not import, as `no-restricted-imports` patterns. */
const forbid = (message, ...groups) => forbidEach([message, groups])

/**
 * Several `forbid`s on the same files, each with its own message: a later config object
 * replaces the rule's options for the files it matches, so a narrower rule restates the
 * wider one it adds to.
 */
const forbidEach = (...rules) => ({
  "no-restricted-imports": ["error", { patterns: rules.map(([message, groups]) => ({ group: groups, message })) }]
})

const cli = ["**/cli/*", "**/cli/**"]
const cluster = ["**/packages/**", "@session-routing/local-cluster"]
const router = [
  "**/SessionRouter",
  "**/SessionRouter.*",
  "**/SessionRouterLive.*",
  "**/SessionRouting.*",
  "**/sessionRouter/**"
]
const floor3 = [
  "src/layers and src/health never import the runner, the CLI or LocalCluster.",
  ["**/runner/**", ...cli, ...cluster]
]

export default tseslint.config(
  { ignores: ["**/node_modules/**", "reports/**", ".stryker-tmp/**", "coverage/**", "dist/**", "**/build/**"] },
  {
    files: ["**/*.ts", "**/*.mjs"],
    languageOptions: { parser: tseslint.parser, ecmaVersion: 2022, sourceType: "module" },
    plugins: { "@effect": effectEslint },
    rules: {
      "@effect/dprint": [
        "error",
        {
          config: {
            indentWidth: 2,
            lineWidth: 120,
            semiColons: "asi",
            quoteStyle: "alwaysDouble",
            trailingCommas: "never",
            operatorPosition: "maintain",
            "arrowFunction.useParentheses": "force"
          }
        }
      ]
    }
  },
  // Floor 1: the domain is pure and imports nothing of the floors above it.
  {
    files: ["src/domain/**/*.ts"],
    rules: forbid(
      "src/domain is pure: it imports no service, layer, health, runner, CLI or cluster code.",
      "**/services/**",
      "**/layers/**",
      "**/health/**",
      "**/runner/**",
      ...cli,
      ...cluster
    )
  },
  // Floor 2: services declare; they import the domain only.
  {
    files: ["src/services/**/*.ts"],
    rules: forbid(
      "src/services declares Tags, interfaces and errors over the domain; implementations live in src/layers.",
      "**/layers/**",
      "**/health/**",
      "**/runner/**",
      ...cli,
      ...cluster
    )
  },
  // Floor 3: layers and health build on services and the domain, never on each other's callers.
  {
    files: ["src/layers/**/*.ts", "src/health/**/*.ts"],
    rules: forbidEach(floor3)
  },
  // One session's path, top-down: route health reads its status source from context, and
  // the sources derive where status lives from RouterConfig; neither calls back up into
  // the router that published.
  {
    files: ["src/health/**/*.ts"],
    rules: forbidEach(floor3, [
      "src/health reads the RouteStatusSource in context: it imports no layer and never the router.",
      ["**/layers/**", ...router]
    ])
  },
  {
    files: ["src/layers/RouteStatusSourceLive.ts", "src/layers/routeStatusSource/**/*.ts"],
    rules: forbidEach(floor3, [
      "A status source reads through KubeClient what RouterConfig says: it never imports the router.",
      router
    ])
  },
  // Floor 4: the runner is library; it never reaches up into the CLI or across to LocalCluster.
  {
    files: ["src/runner/**/*.ts", "src/index.ts", "src/kubernetes.ts", "src/controller.ts", "src/manifests.ts"],
    rules: forbid("The library never imports the CLI or LocalCluster.", ...cli, ...cluster)
  },
  // Beside: LocalCluster is its own package and reaches the library only by its public entries.
  {
    files: ["packages/local-cluster/src/**/*.ts"],
    rules: forbid(
      "LocalCluster reaches the library only through its public entries: `session-routing` and its subpaths.",
      "**/src/**",
      "session-routing/*",
      "!session-routing/kubernetes",
      "!session-routing/controller",
      "!session-routing/manifests"
    )
  }
)
