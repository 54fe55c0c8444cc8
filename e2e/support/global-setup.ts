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
    /** The API server's version (gitVersion, e.g. v1.30.14): KUBERNETES_VERSION chooses the minor. */
    kubernetesVersion: string;
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
  console.log(`[controlplane] Kubernetes ${plane.version} ready in ${((Date.now() - started) / 1000).toFixed(1)}s (${dir})`);
  // The run's summary line names the version (test/support/failure-summary-reporter.ts).
  process.env.POD_DECORATOR_KUBERNETES_VERSION = plane.version;
  project.provide("kubeconfig", plane.kubeconfig);
  project.provide("kubectl", plane.kubectl);
  project.provide("controlPlaneDir", dir);
  project.provide("etcdUrl", plane.etcdUrl);
  project.provide("kubernetesVersion", plane.version);
  return async () => {
    await stopControlPlane(dir);
    // Logs stay behind only when the run crashed (the reaper stopped the control plane).
    await rm(dir, { recursive: true, force: true });
  };
}
