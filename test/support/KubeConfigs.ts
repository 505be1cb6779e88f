/** A KubeConfig for a test's own server: one cluster (TLS checks skipped), a token user, one context. */
import * as k8s from "@kubernetes/client-node"

export const kubeConfigFor = (server: string, token = "t"): k8s.KubeConfig => {
  const kc = new k8s.KubeConfig()
  kc.loadFromOptions({
    clusters: [{ name: "c", server, skipTLSVerify: true }],
    users: [{ name: "u", token }],
    contexts: [{ name: "x", cluster: "c", user: "u" }],
    currentContext: "x"
  })
  return kc
}
