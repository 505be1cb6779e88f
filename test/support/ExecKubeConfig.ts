/** A kubeconfig whose one user gets its credential from an exec plugin: `node <script>`. */
import * as k8s from "@kubernetes/client-node"

export const kubeConfigWithExec = (server: string, script: string): k8s.KubeConfig => {
  const kc = new k8s.KubeConfig()
  kc.loadFromOptions({
    clusters: [{ name: "c", server, skipTLSVerify: true }],
    users: [{
      name: "u",
      exec: { apiVersion: "client.authentication.k8s.io/v1", command: process.execPath, args: [script] }
    }],
    contexts: [{ name: "x", cluster: "c", user: "u" }],
    currentContext: "x"
  })
  return kc
}
