/**
 * What kubectl shows of a session's Events: `kubectl events` lists session-routing's
 * own, and `kubectl describe pod` prints them under the Pod. Over HTTP against
 * LocalCluster; each kubectl the wire tests drive runs it.
 */
import { describe, expect, it } from "@effect/vitest"
import { createSessionPod } from "@session-routing/local-cluster"
import { Effect } from "effect"
import { kubectls, kubectlWorkspace, requireKubectl } from "../support/Kubectl.js"
import { publishProbed, startCluster, workload } from "../support/ProbedSession.js"

describe("a session's Events through kubectl", () => {
  if (kubectls.length === 0) return requireKubectl()
  const kubectl = kubectls[0]!
  it.scopedLive(
    `${kubectl.name} shows the session's Events with kubectl events and describe pod`,
    () =>
      Effect.gen(function*() {
        const sc = yield* startCluster
        const pod = yield* Effect.orDie(
          createSessionPod(sc.cluster.store, { namespace: sc.namespace, sessionId: "seen", ports: [8080] })
        )
        yield* Effect.orDie(sc.dataPlane!.registerPod(pod, { host: "127.0.0.1", port: yield* workload }))
        yield* publishProbed(sc, pod, "seen")
        const { kubeconfig, run } = yield* kubectlWorkspace(kubectl, "session-events-")
        yield* Effect.orDie(sc.cluster.writeKubeconfig(kubeconfig))

        const events = yield* run("events", "-n", sc.namespace, "--for", `pod/${pod.name}`, "-o", "json")
        expect(events.code, events.stderr).toBe(0)
        const items = (JSON.parse(events.stdout) as { items: ReadonlyArray<Record<string, any>> }).items
        // The Pod's own Events (the kubelet's `Started`) are listed too; ours are those of session-routing.
        const ours = items
          .map((e) => [e.type, e.reason, e.involvedObject.name, e.source?.component ?? e.reportingComponent])
          .filter((row) => row[3] === "session-routing")
        // The host was programmed within the publish's wait: its verdict tells the publish too.
        expect(ours).toEqual([["Normal", "RouteProgrammed", pod.name, "session-routing"]])

        const described = yield* run("describe", "pod", pod.name, "-n", sc.namespace)
        expect(described.code, described.stderr).toBe(0)
        // describe prints the Events table under its own heading: type, reason, and the note.
        expect(described.stdout).toMatch(
          /Events:[\s\S]*Normal\s+RouteProgrammed[\s\S]*8080-seen\.sessions\.localtest\.me \(port 8080\) is programmed, \d+\.\d s after publish/
        )
      }),
    { timeout: 60_000 }
  )
})
