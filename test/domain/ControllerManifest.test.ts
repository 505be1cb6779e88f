/**
 * The controller's manifest as `render --controller` prints it: the runner's RBAC
 * objects for the mode under the controller's own ServiceAccount, its session Role
 * with the controller's verbs added, and the Deployment whole.
 */
import { describe, expect, it } from "@effect/vitest"
import {
  CONTROLLER_IDENTITY_ENV,
  CONTROLLER_NAME,
  controllerDeployment,
  controllerManifest
} from "../../src/domain/ControllerManifest.js"
import { rbacManifest } from "../../src/domain/RbacManifest.js"

const NS = "telo-sessions"
const RBAC_LABELS = { "app.kubernetes.io/name": "session-routing", "app.kubernetes.io/component": "rbac" }
const POD_LABELS = { "app.kubernetes.io/name": "session-routing", "app.kubernetes.io/component": "controller" }
const IMAGE = "registry.example.com/session-routing:1.2.3"
const ENV = [{ name: "SESSION_ROUTING_MODE", value: "ingress" }, { name: "RUNNER_SESSION_NAMESPACE", value: NS }]

describe("controllerManifest", () => {
  it("writes the ServiceAccount, the Role with the runner's and the controller's rules, the bindings, then the Deployment", () => {
    const objects = controllerManifest({
      mode: "ingress",
      sessionNamespace: NS,
      statusSource: "watch",
      image: IMAGE,
      env: ENV
    })
    expect(objects.map((o) => `${o.kind}/${o.metadata?.name}`)).toStrictEqual([
      "ServiceAccount/session-routing-controller",
      "Role/session-routing-controller",
      "RoleBinding/session-routing-controller",
      "ClusterRole/session-routing-controller:telo-sessions:ingress",
      "ClusterRoleBinding/session-routing-controller:telo-sessions:ingress",
      "Deployment/session-routing-controller"
    ])
    expect(objects[1]).toStrictEqual({
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "Role",
      metadata: { name: CONTROLLER_NAME, namespace: NS, labels: RBAC_LABELS },
      rules: [
        { apiGroups: [""], resources: ["services"], verbs: ["create", "delete", "get", "list", "patch"] },
        {
          apiGroups: ["networking.k8s.io"],
          resources: ["ingresses"],
          verbs: ["create", "delete", "get", "list", "patch", "watch"]
        },
        { apiGroups: ["events.k8s.io"], resources: ["events"], verbs: ["create", "patch"] },
        { apiGroups: [""], resources: ["events"], verbs: ["create", "patch"] },
        { apiGroups: [""], resources: ["pods/finalizers"], verbs: ["update"] },
        { apiGroups: [""], resources: ["namespaces"], resourceNames: [NS], verbs: ["get"] },
        { apiGroups: [""], resources: ["pods"], verbs: ["get", "list", "patch", "watch"] },
        { apiGroups: [""], resources: ["pods/status"], verbs: ["patch"] },
        { apiGroups: ["coordination.k8s.io"], resources: ["leases"], verbs: ["create", "get", "list", "update"] }
      ]
    })
    expect(objects[2]).toStrictEqual({
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "RoleBinding",
      metadata: { name: CONTROLLER_NAME, namespace: NS, labels: RBAC_LABELS },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: CONTROLLER_NAME },
      subjects: [{ kind: "ServiceAccount", name: CONTROLLER_NAME, namespace: NS }]
    })
    expect(objects[3]).toStrictEqual({
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRole",
      metadata: { name: "session-routing-controller:telo-sessions:ingress", labels: RBAC_LABELS },
      rules: [{ apiGroups: ["networking.k8s.io"], resources: ["ingressclasses"], verbs: ["list"] }]
    })
  })

  it("grants the runner's reads for gateway mode, the Gateway's namespace included, and the same Deployment", () => {
    const settings = {
      mode: "gateway",
      sessionNamespace: "dev",
      gateway: { name: "web", namespace: "infra" },
      statusSource: "poll",
      probe: true
    } as const
    const objects = controllerManifest({ ...settings, image: IMAGE, env: ENV })
    const runner = rbacManifest({ ...settings, serviceAccount: CONTROLLER_NAME })
    expect(objects.map((o) => `${o.kind}/${o.metadata?.namespace ?? "-"}`)).toStrictEqual([
      "ServiceAccount/dev",
      "Role/dev",
      "RoleBinding/dev",
      "Role/infra",
      "RoleBinding/infra",
      "ClusterRole/-",
      "ClusterRoleBinding/-",
      "Deployment/dev"
    ])
    // Every object but the session Role is the runner's for this configuration.
    expect(objects.slice(0, -1).filter((_, i) => i !== 1)).toStrictEqual(runner.filter((_, i) => i !== 1))
    expect(objects[1]).toMatchObject({
      rules: expect.arrayContaining([{ apiGroups: [""], resources: ["pods/status"], verbs: ["patch"] }])
    })
    expect(objects.at(-1)).toStrictEqual(
      controllerDeployment({ ...settings, image: IMAGE, env: ENV })
    )
  })
})

describe("controllerDeployment", () => {
  it("runs two replicas of the controller as its ServiceAccount, named by the Pod, probed on the metrics port, locked down", () => {
    expect(
      controllerDeployment({ mode: "ingress", sessionNamespace: NS, statusSource: "watch", image: IMAGE, env: ENV })
    )
      .toStrictEqual({
        apiVersion: "apps/v1",
        kind: "Deployment",
        metadata: { name: CONTROLLER_NAME, namespace: NS, labels: POD_LABELS },
        spec: {
          replicas: 2,
          selector: { matchLabels: POD_LABELS },
          template: {
            metadata: { labels: POD_LABELS },
            spec: {
              serviceAccountName: CONTROLLER_NAME,
              securityContext: {
                runAsNonRoot: true,
                runAsUser: 65532,
                runAsGroup: 65532,
                seccompProfile: { type: "RuntimeDefault" }
              },
              topologySpreadConstraints: [{
                maxSkew: 1,
                topologyKey: "kubernetes.io/hostname",
                whenUnsatisfiable: "ScheduleAnyway",
                labelSelector: { matchLabels: POD_LABELS }
              }],
              containers: [{
                name: "controller",
                image: IMAGE,
                command: ["session-routing"],
                args: ["controller", "--metrics-port", "8080", "--metrics-host", "0.0.0.0"],
                env: [
                  ...ENV,
                  {
                    name: "SESSION_ROUTING_CONTROLLER_IDENTITY",
                    valueFrom: { fieldRef: { fieldPath: "metadata.name" } }
                  }
                ],
                ports: [{ name: "metrics", containerPort: 8080, protocol: "TCP" }],
                livenessProbe: {
                  httpGet: { path: "/healthz", port: "metrics" },
                  periodSeconds: 10,
                  failureThreshold: 3
                },
                readinessProbe: {
                  httpGet: { path: "/readyz", port: "metrics" },
                  periodSeconds: 5,
                  failureThreshold: 3
                },
                resources: { requests: { cpu: "100m", memory: "256Mi" } },
                securityContext: {
                  allowPrivilegeEscalation: false,
                  readOnlyRootFilesystem: true,
                  runAsNonRoot: true,
                  capabilities: { drop: ["ALL"] }
                }
              }]
            }
          }
        }
      })
    expect(CONTROLLER_IDENTITY_ENV).toBe("SESSION_ROUTING_CONTROLLER_IDENTITY")
  })

  it("serves on the port it is given and runs the replicas asked for", () => {
    const deployment = controllerDeployment({
      mode: "ingress",
      sessionNamespace: NS,
      statusSource: "watch",
      image: IMAGE,
      env: [],
      metricsPort: 9100,
      replicas: 3
    })
    const container = deployment.spec.template.spec.containers[0]!
    expect([deployment.spec.replicas, container.args, container.ports]).toStrictEqual([
      3,
      ["controller", "--metrics-port", "9100", "--metrics-host", "0.0.0.0"],
      [{ name: "metrics", containerPort: 9100, protocol: "TCP" }]
    ])
    // The identity is always the last variable, whatever configuration comes before it.
    expect(container.env).toStrictEqual([
      { name: "SESSION_ROUTING_CONTROLLER_IDENTITY", valueFrom: { fieldRef: { fieldPath: "metadata.name" } } }
    ])
  })
})
