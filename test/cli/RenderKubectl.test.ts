/**
 * What `render` prints, as kubectl reads it: kubectl parses YAML 1.1 and decodes into
 * the API's types, so a value printed bare that YAML 1.1 reads as a boolean is refused
 * there. Over HTTP against LocalCluster with each kubectl the wire tests drive: a
 * session's objects and the controller's RBAC objects pass a server-side dry run, and
 * the controller's Deployment, a type LocalCluster does not serve, decodes in kubectl
 * itself (`set env --local`, which asks no server).
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as YAML from "yaml"
import type { Deployment } from "../../src/domain/ControllerManifest.js"
import { RoleResource, ServiceResource } from "../../src/domain/Resources.js"
import { kubectls, kubectlWorkspace, requireKubectl } from "../support/Kubectl.js"
import { startCluster } from "../support/RouterHarness.js"
import { runCli } from "./TestCli.js"

/** The documents of render's YAML stream, each as printed. */
const split = (stream: string): ReadonlyArray<string> => stream.split(/^---\n/m)

describe("render's output through kubectl", () => {
  if (kubectls.length === 0) return requireKubectl()

  describe.each(kubectls.map((kubectl) => [kubectl.name, kubectl] as const))("%s", (_, kubectl) => {
    it.scopedLive(
      "applies the objects of session on (a YAML 1.1 boolean) in a server-side dry run",
      () =>
        Effect.gen(function*() {
          const sc = yield* startCluster()
          const { file, kubeconfig, run } = yield* kubectlWorkspace(kubectl, "render-kubectl-session-")
          yield* Effect.orDie(sc.cluster.writeKubeconfig(kubeconfig))
          const rendered = yield* runCli(
            ["render", "--session", "on", "--port", "8080", "--pod-uid", "0b7e6a52-1111-4222-8333-444455556666"],
            { SESSION_ROUTING_BASE_DOMAIN: sc.baseDomain, RUNNER_SESSION_NAMESPACE: sc.namespace }
          )
          expect(rendered.exitCode).toBe(0)
          const applied = yield* run("apply", "--dry-run=server", "-f", yield* file("session.yaml", rendered.stdout))
          expect(applied.code, applied.stderr).toBe(0)
          const services = yield* Effect.orDie(sc.cluster.store.list(ServiceResource, sc.namespace))
          expect(services.items).toEqual([])
        }),
      60_000
    )

    it.scopedLive(
      "applies the controller's ServiceAccount, Roles and bindings in a server-side dry run",
      () =>
        Effect.gen(function*() {
          const sc = yield* startCluster()
          const { file, kubeconfig, run } = yield* kubectlWorkspace(kubectl, "render-kubectl-controller-")
          yield* Effect.orDie(sc.cluster.writeKubeconfig(kubeconfig))
          for (const mode of ["ingress", "gateway"] as const) {
            const rendered = yield* runCli(["render", "--controller", "--mode", mode], {
              SESSION_ROUTING_BASE_DOMAIN: sc.baseDomain,
              RUNNER_SESSION_NAMESPACE: sc.namespace,
              SESSION_GATEWAY_NAME: sc.gateway.name,
              SESSION_GATEWAY_NAMESPACE: sc.gateway.namespace
            })
            expect(rendered.exitCode).toBe(0)
            // LocalCluster serves no apps/v1: the Deployment is decoded in the next test.
            const documents = split(rendered.stdout)
            const rbac = documents.filter((doc) => !doc.includes("kind: Deployment"))
            expect(rbac).toHaveLength(documents.length - 1)
            const applied = yield* run(
              "apply",
              "--dry-run=server",
              "-f",
              yield* file(`${mode}.yaml`, rbac.join("---\n"))
            )
            expect(applied.code, applied.stderr).toBe(0)
          }
          const roles = yield* Effect.orDie(sc.cluster.store.list(RoleResource, sc.namespace))
          expect(roles.items.map((r) => r.metadata?.name)).not.toContain("session-routing-controller")
        }),
      60_000
    )

    it.scopedLive(
      "decodes the controller's Deployment into the API's types, every value as rendered",
      () =>
        Effect.gen(function*() {
          const { file, run } = yield* kubectlWorkspace(kubectl, "render-kubectl-deployment-")
          // --local asks no server, but kubectl loads a kubeconfig all the same.
          yield* file("kubeconfig", "apiVersion: v1\nkind: Config\n")
          const rendered = yield* runCli(["render", "--controller"], {
            SESSION_ROUTING_BASE_DOMAIN: "sessions.example.com"
          })
          expect(rendered.exitCode).toBe(0)
          const text = split(rendered.stdout).find((doc) => doc.includes("kind: Deployment"))!
          const deployment = YAML.parse(text) as Deployment
          // `set env --local` decodes the file into apps/v1 Deployment, sets one variable and
          // prints the result; a value of the wrong type fails the decode.
          const decoded = yield* run(
            "set",
            "env",
            "--local",
            "-f",
            yield* file("deployment.yaml", text),
            "-o",
            "json",
            "DECODED=1"
          )
          expect(decoded.code, decoded.stderr).toBe(0)
          const back = JSON.parse(decoded.stdout) as Deployment
          const [container] = back.spec.template.spec.containers
          expect(container!.env).toEqual([
            ...deployment.spec.template.spec.containers[0]!.env,
            { name: "DECODED", value: "1" }
          ])
          expect({
            ...back,
            spec: {
              ...back.spec,
              template: {
                ...back.spec.template,
                spec: { ...back.spec.template.spec, containers: [{ ...container!, env: container!.env.slice(0, -1) }] }
              }
            }
          }).toMatchObject(deployment)
        }),
      60_000
    )
  })
})
