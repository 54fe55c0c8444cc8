// One real control plane for the whole e2e run; each test gets its own namespace.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { TestProject } from "vitest/node";
import { startControlPlane, stopControlPlane } from "../controlplane/controlplane.ts";

declare module "vitest" {
  export interface ProvidedContext {
    kubeconfig: string;
    kubectl: string;
    controlPlaneDir: string;
    etcdUrl: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const dir = await mkdtemp(join(tmpdir(), "pod-decorator-e2e-"));
  const started = Date.now();
  // The reaper stops the control plane even if this run is killed before teardown.
  const plane = await startControlPlane(dir, {
    ownerPid: process.pid,
    crds: [fileURLToPath(new URL("../../config/crd/", import.meta.url))],
    log: (line) => console.log(`[controlplane] ${line}`),
  });
  console.log(`[controlplane] ready in ${((Date.now() - started) / 1000).toFixed(1)}s (${dir})`);
  project.provide("kubeconfig", plane.kubeconfig);
  project.provide("kubectl", plane.kubectl);
  project.provide("controlPlaneDir", dir);
  project.provide("etcdUrl", plane.etcdUrl);
  return async () => {
    await stopControlPlane(dir);
    // Logs stay behind only when the run crashed (the reaper stopped the control plane).
    await rm(dir, { recursive: true, force: true });
  };
}
