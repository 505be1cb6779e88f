/**
 * The least-privilege manifest as `render rbac` writes it: every object whole, in the
 * order `kubectl apply -f` needs, in ingress mode and in gateway mode with the Gateway
 * beside the sessions, elsewhere, or not named. LeastPrivilege.test.ts shows it is
 * enough against a cluster with RBAC on.
 */
import { describe, expect, it } from "@effect/vitest"
import { clusterRules, controllerRules, RBAC_NAME, rbacManifest, sessionRules } from "../../src/domain/RbacManifest.js"

const NS = "telo-sessions"
const LABELS = { "app.kubernetes.io/name": "session-routing", "app.kubernetes.io/component": "rbac" }

describe("rbacManifest", () => {
  it("writes the ServiceAccount, Role, ClusterRole and their bindings for ingress mode, polling", () => {
    expect(rbacManifest({ mode: "ingress", sessionNamespace: NS, statusSource: "poll", serviceAccount: "runner" }))
      .toStrictEqual([
        {
          apiVersion: "v1",
          kind: "ServiceAccount",
          metadata: { name: "runner", namespace: NS, labels: LABELS }
        },
        {
          apiVersion: "rbac.authorization.k8s.io/v1",
          kind: "Role",
          metadata: { name: "runner", namespace: NS, labels: LABELS },
          rules: [
            { apiGroups: [""], resources: ["services"], verbs: ["create", "delete", "get", "list", "patch"] },
            {
              apiGroups: ["networking.k8s.io"],
              resources: ["ingresses"],
              verbs: ["create", "delete", "get", "list", "patch"]
            },
            { apiGroups: ["events.k8s.io"], resources: ["events"], verbs: ["create", "patch"] },
            { apiGroups: [""], resources: ["events"], verbs: ["create", "patch"] },
            { apiGroups: [""], resources: ["pods/finalizers"], verbs: ["update"] },
            { apiGroups: [""], resources: ["namespaces"], resourceNames: [NS], verbs: ["get"] }
          ]
        },
        {
          apiVersion: "rbac.authorization.k8s.io/v1",
          kind: "RoleBinding",
          metadata: { name: "runner", namespace: NS, labels: LABELS },
          roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "runner" },
          subjects: [{ kind: "ServiceAccount", name: "runner", namespace: NS }]
        },
        {
          apiVersion: "rbac.authorization.k8s.io/v1",
          kind: "ClusterRole",
          metadata: { name: "runner:telo-sessions:ingress", labels: LABELS },
          rules: [{ apiGroups: ["networking.k8s.io"], resources: ["ingressclasses"], verbs: ["list"] }]
        },
        {
          apiVersion: "rbac.authorization.k8s.io/v1",
          kind: "ClusterRoleBinding",
          metadata: { name: "runner:telo-sessions:ingress", labels: LABELS },
          roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "runner:telo-sessions:ingress" },
          subjects: [{ kind: "ServiceAccount", name: "runner", namespace: NS }]
        }
      ])
  })

  it("names the namespace's objects session-routing when no ServiceAccount is given, and the cluster's by namespace and mode", () => {
    const objects = rbacManifest({ mode: "ingress", sessionNamespace: NS, statusSource: "watch" })
    expect(RBAC_NAME).toBe("session-routing")
    expect(objects.map((o) => `${o.kind}/${o.metadata?.name}`)).toStrictEqual([
      "ServiceAccount/session-routing",
      "Role/session-routing",
      "RoleBinding/session-routing",
      "ClusterRole/session-routing:telo-sessions:ingress",
      "ClusterRoleBinding/session-routing:telo-sessions:ingress"
    ])
  })

  it("reads a Gateway in another namespace through a Role and a binding there", () => {
    const objects = rbacManifest({
      mode: "gateway",
      sessionNamespace: NS,
      gateway: { name: "sessions", namespace: "infra" },
      statusSource: "watch"
    })
    expect(objects.map((o) => `${o.kind}/${o.metadata?.namespace ?? "-"}`)).toStrictEqual([
      "ServiceAccount/telo-sessions",
      "Role/telo-sessions",
      "RoleBinding/telo-sessions",
      "Role/infra",
      "RoleBinding/infra",
      "ClusterRole/-",
      "ClusterRoleBinding/-"
    ])
    expect(objects[3]).toStrictEqual({
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "Role",
      metadata: { name: "session-routing:telo-sessions", namespace: "infra", labels: LABELS },
      rules: [{ apiGroups: ["gateway.networking.k8s.io"], resources: ["gateways"], verbs: ["get"] }]
    })
    expect(objects[4]).toStrictEqual({
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "RoleBinding",
      metadata: { name: "session-routing:telo-sessions", namespace: "infra", labels: LABELS },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "session-routing:telo-sessions" },
      subjects: [{ kind: "ServiceAccount", name: "session-routing", namespace: NS }]
    })
    // The session namespace's Role does not grant the Gateway read again.
    expect(
      sessionRules({
        mode: "gateway",
        sessionNamespace: NS,
        gateway: { name: "sessions", namespace: "infra" },
        statusSource: "watch"
      }).map((r) => r.resources?.[0])
    ).toStrictEqual(["services", "httproutes", "events", "events", "pods/finalizers", "namespaces"])
  })

  it("reads a Gateway beside the sessions through the session Role, named or defaulted to that namespace", () => {
    for (const gateway of [{ name: "sessions" }, { name: "sessions", namespace: NS }]) {
      const settings = { mode: "gateway", sessionNamespace: NS, gateway, statusSource: "poll" } as const
      expect(rbacManifest(settings).map((o) => o.kind)).toStrictEqual([
        "ServiceAccount",
        "Role",
        "RoleBinding",
        "ClusterRole",
        "ClusterRoleBinding"
      ])
      expect(sessionRules(settings)).toStrictEqual([
        { apiGroups: [""], resources: ["services"], verbs: ["create", "delete", "get", "list", "patch"] },
        {
          apiGroups: ["gateway.networking.k8s.io"],
          resources: ["httproutes"],
          verbs: ["create", "delete", "get", "list", "patch"]
        },
        { apiGroups: ["events.k8s.io"], resources: ["events"], verbs: ["create", "patch"] },
        { apiGroups: [""], resources: ["events"], verbs: ["create", "patch"] },
        { apiGroups: [""], resources: ["pods/finalizers"], verbs: ["update"] },
        { apiGroups: [""], resources: ["namespaces"], resourceNames: [NS], verbs: ["get"] },
        { apiGroups: ["gateway.networking.k8s.io"], resources: ["gateways"], verbs: ["get"] }
      ])
    }
  })

  it("grants no Gateway read in gateway mode when no Gateway is named", () => {
    const settings = { mode: "gateway", sessionNamespace: NS, statusSource: "watch" } as const
    expect(rbacManifest(settings).map((o) => o.kind)).toStrictEqual([
      "ServiceAccount",
      "Role",
      "RoleBinding",
      "ClusterRole",
      "ClusterRoleBinding"
    ])
    expect(sessionRules(settings).map((r) => r.resources?.[0])).toStrictEqual([
      "services",
      "httproutes",
      "events",
      "events",
      "pods/finalizers",
      "namespaces"
    ])
  })

  it("grants no Gateway read in ingress mode, wherever a Gateway is named", () => {
    for (const gateway of [{ name: "sessions" }, { name: "sessions", namespace: "infra" }]) {
      const settings = { mode: "ingress", sessionNamespace: NS, gateway, statusSource: "watch" } as const
      expect(rbacManifest(settings).map((o) => o.kind)).toStrictEqual([
        "ServiceAccount",
        "Role",
        "RoleBinding",
        "ClusterRole",
        "ClusterRoleBinding"
      ])
      expect(sessionRules(settings).map((r) => r.resources?.[0])).toStrictEqual([
        "services",
        "ingresses",
        "events",
        "events",
        "pods/finalizers",
        "namespaces"
      ])
    }
  })

  it("adds watch for the shared watch and the EndpointSlice list for the probe", () => {
    const rules = sessionRules({ mode: "ingress", sessionNamespace: NS, statusSource: "watch", probe: true })
    expect(rules[1]?.verbs).toStrictEqual(["create", "delete", "get", "list", "patch", "watch"])
    expect(rules.at(-1)).toStrictEqual({
      apiGroups: ["discovery.k8s.io"],
      resources: ["endpointslices"],
      verbs: ["list"]
    })
    expect(sessionRules({ mode: "ingress", sessionNamespace: NS, statusSource: "watch", probe: false })).toHaveLength(6)
  })

  it("reads GatewayClasses, cluster-wide, in gateway mode", () => {
    expect(clusterRules({ mode: "gateway", sessionNamespace: NS, statusSource: "watch" })).toStrictEqual([
      { apiGroups: ["gateway.networking.k8s.io"], resources: ["gatewayclasses"], verbs: ["get"] }
    ])
  })

  it("gives two installs, for two namespaces or two modes, cluster objects of their own", () => {
    const clusterNames = (sessionNamespace: string, mode: "ingress" | "gateway") =>
      rbacManifest({ mode, sessionNamespace, statusSource: "watch", gateway: { name: "gw", namespace: "infra" } })
        .filter((o) => (o.kind ?? "").startsWith("Cluster") || o.metadata?.namespace === "infra")
        .map((o) => `${o.kind}/${o.metadata?.name}`)
    const a = clusterNames("team-a", "gateway")
    const b = clusterNames("team-b", "gateway")
    const c = clusterNames("team-a", "ingress")
    expect(a.filter((name) => b.includes(name) || c.includes(name))).toStrictEqual([])
  })

  it("adds controller mode's Pods, their status and its Lease to the session Role, and nothing else", () => {
    const runner = {
      mode: "gateway",
      sessionNamespace: NS,
      gateway: { name: "gw", namespace: "infra" },
      statusSource: "poll"
    } as const
    const controller = { ...runner, controller: true }
    expect(controllerRules).toStrictEqual([
      { apiGroups: [""], resources: ["pods"], verbs: ["get", "list", "patch", "watch"] },
      { apiGroups: [""], resources: ["pods/status"], verbs: ["patch"] },
      { apiGroups: ["coordination.k8s.io"], resources: ["leases"], verbs: ["create", "get", "list", "update"] }
    ])
    expect(sessionRules(controller)).toStrictEqual([...sessionRules(runner), ...controllerRules])
    expect(clusterRules(controller)).toStrictEqual(clusterRules(runner))
    // The Gateway's namespace is read as before; the controller's grants stay in the session namespace.
    expect(rbacManifest(controller).filter((o) => o.kind !== "Role" || o.metadata?.namespace !== NS)).toStrictEqual(
      rbacManifest(runner).filter((o) => o.kind !== "Role" || o.metadata?.namespace !== NS)
    )
  })
})
