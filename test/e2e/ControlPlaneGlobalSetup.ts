/**
 * Vitest global setup of `npm run test:cluster`: with no `SESSION_ROUTING_E2E_KUBECONFIG`,
 * starts the real control plane (test/control-plane, built first if it is not) with the
 * suite's Gateway (cluster/gateway.yaml) and hands the tests what it printed; stops it when
 * the run ends. With the variable set, the suite runs against that cluster and this does
 * nothing.
 */
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import type { TestProject } from "vitest/node"
import { type ControlPlaneInfo, startControlPlaneProcess } from "../control-plane/ControlPlaneProcess.js"

declare module "vitest" {
  export interface ProvidedContext {
    /** The real control plane this run started, or null when the suite runs against another cluster. */
    controlPlane: ControlPlaneInfo | null
  }
}

const GATEWAY_FILE = fileURLToPath(new URL("cluster/gateway.yaml", import.meta.url))
/** A first build of the control plane takes minutes; a built one starts in seconds. */
const START_WITHIN_MS = 45 * 60_000

export default async function setup(project: TestProject): Promise<(() => Promise<void>) | undefined> {
  if ((process.env.SESSION_ROUTING_E2E_KUBECONFIG ?? "").trim() !== "") {
    project.provide("controlPlane", null)
    return undefined
  }
  const dir = await mkdtemp(join(tmpdir(), "session-routing-e2e-control-plane-"))
  console.log("starting the real control plane (npm run cluster:real); a first run builds it")
  const controlPlane = await startControlPlaneProcess(
    ["--kubeconfig", join(dir, "kubeconfig"), "--gateway-file", GATEWAY_FILE, "--control"],
    { startWithin: START_WITHIN_MS, onStderr: (chunk) => process.stderr.write(chunk) }
  ).catch(async (error: unknown) => {
    await rm(dir, { recursive: true, force: true })
    throw error
  })
  console.log(`real control plane ready: Kubernetes ${controlPlane.info.kubernetes} at ${controlPlane.info.server}`)
  project.provide("controlPlane", controlPlane.info)
  return async () => {
    await controlPlane.stop()
    await rm(dir, { recursive: true, force: true })
  }
}
