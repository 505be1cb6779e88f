/**
 * kubectl's generator commands against LocalCluster, plain and with RBAC on (as the admin):
 * kubectl 1.35 sends their objects as protobuf (`create serviceaccount`, `namespace`,
 * `role`, `clusterrole`, `rolebinding`, `clusterrolebinding`, `service`, `ingress`), and so
 * do `auth reconcile`'s updates and deletes. Assertions read what the server stored.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import type { KubeObject, ResourceType } from "session-routing/kubernetes"
import { kubectls, kubectlWorkspace, requireKubectl } from "../../../test/support/Kubectl.js"
import { LocalCluster } from "../src/LocalCluster.js"
import {
  ClusterRoleBindingResource,
  ClusterRoleResource,
  IngressResource,
  NamespaceResource,
  RoleBindingResource,
  RoleResource,
  ServiceAccountResource,
  ServiceResource
} from "../src/ServedResources.js"
import { NS } from "./ClusterFixtures.js"
import { call } from "./WireFixtures.js"

const RBAC = "rbac.authorization.k8s.io"

const stored = (
  cluster: LocalCluster.Service,
  resource: ResourceType<KubeObject>,
  namespace: string | undefined,
  name: string
) => Effect.orDie(cluster.store.get(resource, namespace, name)) as Effect.Effect<any>

const clusters = [["plain", {}], ["with RBAC on, as the admin", { auth: { rbac: true } }]] as const

describe("kubectl create against LocalCluster", () => {
  if (kubectls.length === 0) return requireKubectl()
  describe.each(kubectls.map((kubectl) => [kubectl.name, kubectl] as const))("%s", (_, kubectl) => {
    describe.each(clusters)("%s", (_, options) => {
      it.scopedLive(
        "stores what create serviceaccount, namespace, role, clusterrole and the bindings sent",
        () =>
          Effect.gen(function*() {
            const cluster = yield* LocalCluster.make({ namespaces: [NS], ...options })
            const { kubeconfig, run } = yield* kubectlWorkspace(kubectl, "local-cluster-create-")
            yield* cluster.writeKubeconfig(kubeconfig)
            const commands = [
              ["create", "serviceaccount", "runner", "-n", NS],
              ["create", "namespace", "other"],
              // What `session-routing check` prints for a missing grant.
              ["create", "role", "session-routing", "-n", NS, "--verb=watch", "--resource=ingresses.networking.k8s.io"],
              ["create", "role", "named", "-n", NS, "--verb=get,list", "--resource=pods", "--resource-name=a"],
              ["create", "clusterrole", "reader", "--verb=get", "--resource=services", "--non-resource-url=/healthz"],
              ["create", "clusterrole", "aggregated", "--aggregation-rule=team=routing"],
              [
                "create",
                "rolebinding",
                "bound",
                "-n",
                NS,
                "--role=session-routing",
                `--serviceaccount=${NS}:runner`,
                "--user=alice"
              ],
              ["create", "clusterrolebinding", "cluster-bound", "--clusterrole=reader", "--group=devs"]
            ]
            for (const args of commands) {
              const created = yield* run(...args)
              expect(created.code, `${args.join(" ")}: ${created.stderr}`).toBe(0)
            }
            expect((yield* stored(cluster, ServiceAccountResource, NS, "runner")).metadata).toMatchObject({
              name: "runner",
              namespace: NS,
              uid: expect.any(String)
            })
            expect((yield* stored(cluster, NamespaceResource, undefined, "other")).metadata.name).toBe("other")
            expect((yield* stored(cluster, RoleResource, NS, "session-routing")).rules).toEqual([
              { verbs: ["watch"], apiGroups: ["networking.k8s.io"], resources: ["ingresses"] }
            ])
            expect((yield* stored(cluster, RoleResource, NS, "named")).rules).toEqual([
              { verbs: ["get", "list"], apiGroups: [""], resources: ["pods"], resourceNames: ["a"] }
            ])
            expect((yield* stored(cluster, ClusterRoleResource, undefined, "reader")).rules).toEqual([
              { verbs: ["get"], apiGroups: [""], resources: ["services"] },
              { verbs: ["get"], nonResourceURLs: ["/healthz"] }
            ])
            expect((yield* stored(cluster, ClusterRoleResource, undefined, "aggregated")).aggregationRule).toEqual({
              clusterRoleSelectors: [{ matchLabels: { team: "routing" } }]
            })
            const binding = yield* stored(cluster, RoleBindingResource, NS, "bound")
            expect([binding.roleRef, binding.subjects]).toEqual([
              { apiGroup: RBAC, kind: "Role", name: "session-routing" },
              [
                { kind: "User", apiGroup: RBAC, name: "alice" },
                { kind: "ServiceAccount", name: "runner", namespace: NS }
              ]
            ])
            const clusterBinding = yield* stored(cluster, ClusterRoleBindingResource, undefined, "cluster-bound")
            expect([clusterBinding.roleRef, clusterBinding.subjects]).toEqual([
              { apiGroup: RBAC, kind: "ClusterRole", name: "reader" },
              [{ kind: "Group", apiGroup: RBAC, name: "devs" }]
            ])
            // A server-side dry run is answered and stores nothing.
            const dry = yield* run(
              "create",
              "role",
              "dry",
              "-n",
              NS,
              "--verb=get",
              "--resource=pods",
              "--dry-run=server"
            )
            expect(dry.code, dry.stderr).toBe(0)
            expect((yield* Effect.either(cluster.store.get(RoleResource, NS, "dry")))._tag).toBe("Left")
          }),
        60_000
      )

      it.scopedLive("stores what create service and create ingress sent", () =>
        Effect.gen(function*() {
          const cluster = yield* LocalCluster.make({ namespaces: [NS], ...options })
          const { kubeconfig, run } = yield* kubectlWorkspace(kubectl, "local-cluster-create-")
          yield* cluster.writeKubeconfig(kubeconfig)
          const commands = [
            ["create", "service", "clusterip", "web", "-n", NS, "--tcp=80:8080"],
            ["create", "service", "nodeport", "named", "-n", NS, "--tcp=80:http"],
            ["create", "service", "externalname", "outside", "-n", NS, "--external-name=example.com"],
            ["create", "ingress", "routes", "-n", NS, "--class=nginx", "--rule=foo.example/api*=web:80,tls=foo-cert"]
          ]
          for (const args of commands) {
            const created = yield* run(...args)
            expect(created.code, `${args.join(" ")}: ${created.stderr}`).toBe(0)
          }
          const web = yield* stored(cluster, ServiceResource, NS, "web")
          expect([web.metadata.labels, web.spec.selector, web.spec.type, web.spec.ports]).toEqual([
            { app: "web" },
            { app: "web" },
            "ClusterIP",
            [{ name: "80-8080", protocol: "TCP", port: 80, targetPort: 8080 }]
          ])
          // LocalCluster allocates no cluster IPs (its README): the generator's empty one stays empty.
          expect(web.spec.clusterIP ?? "").toBe("")
          const named = yield* stored(cluster, ServiceResource, NS, "named")
          expect([named.spec.type, named.spec.ports[0].targetPort]).toEqual(["NodePort", "http"])
          const outside = yield* stored(cluster, ServiceResource, NS, "outside")
          expect([outside.spec.type, outside.spec.externalName]).toEqual(["ExternalName", "example.com"])
          expect((yield* stored(cluster, IngressResource, NS, "routes")).spec).toEqual({
            ingressClassName: "nginx",
            tls: [{ hosts: ["foo.example"], secretName: "foo-cert" }],
            rules: [{
              host: "foo.example",
              http: {
                paths: [{
                  path: "/api",
                  pathType: "Prefix",
                  backend: { service: { name: "web", port: { number: 80 } } }
                }]
              }
            }]
          })
        }), 60_000)

      // auth reconcile updates a Role (PUT), creates one, and deletes and re-creates a
      // binding whose roleRef changed: each body protobuf, the delete's a DeleteOptions.
      it.scopedLive("reconciles roles and bindings with auth reconcile", () =>
        Effect.gen(function*() {
          const cluster = yield* LocalCluster.make({ namespaces: [NS], ...options })
          const { file, kubeconfig, run } = yield* kubectlWorkspace(kubectl, "local-cluster-create-")
          yield* cluster.writeKubeconfig(kubeconfig)
          for (
            const args of [
              ["create", "role", "reader", "-n", NS, "--verb=get", "--resource=pods"],
              ["create", "role", "old", "-n", NS, "--verb=get", "--resource=pods"],
              ["create", "rolebinding", "bound", "-n", NS, "--role=old", "--user=alice"]
            ]
          ) expect((yield* run(...args)).code).toBe(0)
          const manifest = yield* file(
            "rbac.yaml",
            `apiVersion: ${RBAC}/v1
kind: Role
metadata: {name: reader, namespace: ${NS}}
rules:
- {apiGroups: [""], resources: [services], verbs: [list]}
---
apiVersion: ${RBAC}/v1
kind: Role
metadata: {name: writer, namespace: ${NS}}
rules:
- {apiGroups: [""], resources: [pods], verbs: [create]}
---
apiVersion: ${RBAC}/v1
kind: RoleBinding
metadata: {name: bound, namespace: ${NS}}
roleRef: {apiGroup: ${RBAC}, kind: Role, name: reader}
subjects:
- {apiGroup: ${RBAC}, kind: User, name: bob}
`
          )
          const before = yield* stored(cluster, RoleBindingResource, NS, "bound")
          const reconciled = yield* run("auth", "reconcile", "-f", manifest)
          expect(reconciled.code, reconciled.stderr).toBe(0)
          // Reconcile adds the missing rule and keeps the one already there.
          expect((yield* stored(cluster, RoleResource, NS, "reader")).rules).toEqual([
            { verbs: ["get"], apiGroups: [""], resources: ["pods"] },
            { verbs: ["list"], apiGroups: [""], resources: ["services"] }
          ])
          expect((yield* stored(cluster, RoleResource, NS, "writer")).rules).toEqual([
            { verbs: ["create"], apiGroups: [""], resources: ["pods"] }
          ])
          const after = yield* stored(cluster, RoleBindingResource, NS, "bound")
          expect(after.metadata.uid).not.toBe(before.metadata.uid)
          // A roleRef cannot change: the binding is deleted and created again as the manifest has it.
          expect([after.roleRef.name, after.subjects]).toEqual(["reader", [{
            kind: "User",
            apiGroup: RBAC,
            name: "bob"
          }]])
        }), 60_000)
    })
  })
})

describe("a protobuf body of a type LocalCluster has no schema for", () => {
  it.scopedLive("is refused with 415 as the API server refuses a body in a format it does not read", () =>
    Effect.gen(function*() {
      const cluster = yield* LocalCluster.make({ namespaces: [NS] })
      // `k8s\0` + runtime.Unknown { typeMeta { apiVersion "v1", kind "Pod" }, raw (an empty Pod) }.
      const pod = Buffer.from("6b3873000a0d0a0276311207506f6412021a00", "hex")
      const answer = yield* call(cluster.url, `/api/v1/namespaces/${NS}/pods`, {
        method: "POST",
        headers: { "content-type": "application/vnd.kubernetes.protobuf" },
        body: pod
      })
      expect([answer.status, answer.body.reason, answer.body.message]).toEqual([
        415,
        "UnsupportedMediaType",
        "the body of the request was in an unknown format - accepted media types include: application/json, application/yaml"
      ])
    }))
})
