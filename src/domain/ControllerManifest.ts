/**
 * What deploys controller mode, as plain objects: the runner's least privilege for the
 * configured mode plus the controller's own verbs, under a ServiceAccount of its own,
 * and a Deployment of replicas that elect one leader. `render --controller` prints it.
 */
import type { ContainerPort, KubeObject, ObjectMeta } from "./Objects.js"
import { rbacManifest, type RbacSettings } from "./RbacManifest.js"

/**
 * The name of the controller's ServiceAccount, Role, RoleBinding and Deployment, and of
 * its Lease when not sharded.
 *
 * @since 0.1.0
 * @category constants
 */
export const CONTROLLER_NAME = "session-routing-controller"

/**
 * The variable the controller reads its leader-election identity from; the manifest
 * sets it to the Pod's name, so the Lease's holder names a Pod `kubectl get pods` shows.
 *
 * @since 0.1.0
 * @category constants
 */
export const CONTROLLER_IDENTITY_ENV = "SESSION_ROUTING_CONTROLLER_IDENTITY"

/**
 * Where the published image lives; the tag is the package version.
 *
 * @since 0.1.0
 * @category constants
 */
export const CONTROLLER_IMAGE_REPOSITORY = "ghcr.io/session-routing/session-routing"

/**
 * One container environment variable: a value, or a field of the Pod through the downward API.
 *
 * @since 0.1.0
 * @category models
 */
export interface EnvVar {
  readonly name: string
  readonly value?: string
  readonly valueFrom?: { readonly fieldRef: { readonly fieldPath: string } }
}

/** An HTTP GET probe on a named container port. */
export interface HttpProbe {
  readonly httpGet: { readonly path: string; readonly port: string }
  readonly periodSeconds: number
  readonly failureThreshold: number
}

/** The controller's container, with the fields the manifest sets. */
export interface ControllerContainer {
  readonly name: string
  readonly image: string
  readonly command: ReadonlyArray<string>
  readonly args: ReadonlyArray<string>
  readonly env: ReadonlyArray<EnvVar>
  readonly ports: ReadonlyArray<ContainerPort>
  readonly livenessProbe: HttpProbe
  readonly readinessProbe: HttpProbe
  readonly resources: { readonly requests: Readonly<Record<string, string>> }
  readonly securityContext: {
    readonly allowPrivilegeEscalation: false
    readonly readOnlyRootFilesystem: true
    readonly runAsNonRoot: true
    readonly capabilities: { readonly drop: ReadonlyArray<string> }
  }
}

/**
 * An `apps/v1` Deployment, with the fields the controller's manifest sets.
 *
 * @since 0.1.0
 * @category models
 */
export interface Deployment extends KubeObject {
  readonly spec: {
    readonly replicas: number
    readonly selector: { readonly matchLabels: Readonly<Record<string, string>> }
    readonly template: {
      readonly metadata: ObjectMeta
      readonly spec: {
        readonly serviceAccountName: string
        readonly securityContext: Readonly<Record<string, unknown>>
        readonly topologySpreadConstraints: ReadonlyArray<Readonly<Record<string, unknown>>>
        readonly containers: ReadonlyArray<ControllerContainer>
      }
    }
  }
}

/**
 * What decides the controller's manifest: what decides its grants, the image, and the
 * configuration as the environment the process reads it from.
 *
 * @since 0.1.0
 * @category models
 */
export interface ControllerManifestSettings extends Omit<RbacSettings, "serviceAccount" | "controller"> {
  readonly image: string
  /** The routing configuration as variables, the identity aside (the manifest adds it). */
  readonly env: ReadonlyArray<EnvVar>
  /** Default 2: one routes, one waits on the Lease to take over. */
  readonly replicas?: number
  /** Where `/healthz`, `/readyz` and `/metrics` are served; default 8080. */
  readonly metricsPort?: number
}

/** The port the manifest serves health and metrics on unless told otherwise. */
export const DEFAULT_METRICS_PORT = 8080

const POD_LABELS = { "app.kubernetes.io/name": "session-routing", "app.kubernetes.io/component": "controller" }

// Pod Security's "restricted" profile asks for all of these. A numeric user lets the
// kubelet verify runAsNonRoot whatever user the image names (it refuses a name it
// cannot resolve), and the process writes no file, so the root filesystem stays read-only.
const NON_ROOT_USER = 65532

const probe = (path: string, periodSeconds: number): HttpProbe => ({
  httpGet: { path, port: "metrics" },
  periodSeconds,
  failureThreshold: 3
})

/**
 * The Deployment: replicas that stand for the Lease, each serving its health on the
 * metrics port, as a non-root user with nothing to escalate to.
 *
 * @since 0.1.0
 * @category rules
 */
export const controllerDeployment = (settings: ControllerManifestSettings): Deployment => {
  const port = settings.metricsPort ?? DEFAULT_METRICS_PORT
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: CONTROLLER_NAME, namespace: settings.sessionNamespace, labels: POD_LABELS },
    spec: {
      replicas: settings.replicas ?? 2,
      selector: { matchLabels: POD_LABELS },
      template: {
        metadata: { labels: POD_LABELS },
        spec: {
          serviceAccountName: CONTROLLER_NAME,
          securityContext: {
            runAsNonRoot: true,
            runAsUser: NON_ROOT_USER,
            runAsGroup: NON_ROOT_USER,
            seccompProfile: { type: "RuntimeDefault" }
          },
          // Two replicas on one node would both go with it: spread them where the cluster can.
          topologySpreadConstraints: [{
            maxSkew: 1,
            topologyKey: "kubernetes.io/hostname",
            whenUnsatisfiable: "ScheduleAnyway",
            labelSelector: { matchLabels: POD_LABELS }
          }],
          containers: [{
            name: "controller",
            image: settings.image,
            command: ["session-routing"],
            // Every interface: the kubelet probes the Pod's IP, not its loopback.
            args: ["controller", "--metrics-port", String(port), "--metrics-host", "0.0.0.0"],
            env: [
              ...settings.env,
              { name: CONTROLLER_IDENTITY_ENV, valueFrom: { fieldRef: { fieldPath: "metadata.name" } } }
            ],
            ports: [{ name: "metrics", containerPort: port, protocol: "TCP" }],
            livenessProbe: probe("/healthz", 10),
            readinessProbe: probe("/readyz", 5),
            // Sized for about a thousand sessions (docs/performance.md); no limit, since
            // the peak grows with the sessions a cluster runs.
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
  }
}

/**
 * Every object to apply, in the order `kubectl apply -f` needs them: the RBAC objects
 * (the runner's grants for this mode plus the controller's, `controllerRules`) under the
 * ServiceAccount `session-routing-controller`, then the Deployment that runs as it.
 *
 * @since 0.1.0
 * @category rules
 */
export const controllerManifest = (settings: ControllerManifestSettings): ReadonlyArray<KubeObject> => {
  const { env: _env, image: _image, metricsPort: _port, replicas: _replicas, ...rbac } = settings
  return [
    ...rbacManifest({ ...rbac, serviceAccount: CONTROLLER_NAME, controller: true }),
    controllerDeployment(settings)
  ]
}
