/**
 * Helpers for tests against a LocalCluster with authentication and RBAC on: the live
 * client as a given identity, and grants written as the Role and RoleBinding an admin
 * would apply.
 */
import * as k8s from "@kubernetes/client-node"
import type { Credential, LocalCluster } from "@session-routing/local-cluster"
import { Effect, Layer } from "effect"
import type { PolicyRule, RoleBinding } from "../../src/domain/Objects.js"
import { RoleBindingResource, RoleResource } from "../../src/domain/Resources.js"
import { KubeClientLive } from "../../src/layers/KubeClientLive.js"
import * as RouterConfigLive from "../../src/layers/RouterConfigLive.js"
import type { KubeClient } from "../../src/services/KubeClient.js"
import type { RouterConfig } from "../../src/services/RouterConfig.js"

/** The live KubeClient over HTTPS, authenticated by `credential`, its time limit `RouterConfig`'s. */
export const liveClientAs = (
  cluster: LocalCluster.Service,
  credential: Credential
): Layer.Layer<KubeClient, never, RouterConfig> =>
  Layer.unwrapEffect(
    Effect.map(cluster.kubeconfigAs(credential), (text) => {
      const kc = new k8s.KubeConfig()
      kc.loadFromString(text)
      return Layer.orDie(KubeClientLive.layerConfigFromKubeConfig(kc))
    })
  )

/** `liveClientAs` with the default configuration's time limit (20 s), for a test that has no `RouterConfig`. */
export const defaultClientAs = (cluster: LocalCluster.Service, credential: Credential): Layer.Layer<KubeClient> =>
  liveClientAs(cluster, credential).pipe(Layer.provide(Layer.orDie(RouterConfigLive.layerFrom({}))))

/** Who a binding names: a user by name, or a ServiceAccount. */
export type Grantee = { readonly user: string } | { readonly serviceAccount: string }

/** Writes Role `name` with `rules` in `namespace`, bound to `grantee`. */
export const grant = (
  cluster: LocalCluster.Service,
  namespace: string,
  name: string,
  grantee: Grantee,
  rules: ReadonlyArray<PolicyRule>
) =>
  Effect.gen(function*() {
    yield* cluster.store.create(RoleResource, namespace, {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "Role",
      metadata: { name, namespace },
      rules
    })
    const binding: RoleBinding = {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "RoleBinding",
      metadata: { name, namespace },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name },
      subjects: [
        "user" in grantee
          ? { kind: "User", apiGroup: "rbac.authorization.k8s.io", name: grantee.user }
          : { kind: "ServiceAccount", name: grantee.serviceAccount, namespace }
      ]
    }
    yield* cluster.store.create(RoleBindingResource, namespace, binding)
  }).pipe(Effect.orDie)
