// One real cluster for the whole real-node run: the control plane started for a node, and one
// node (kubelet, containerd, runc, CNI, kube-proxy) with the test images and the project's image
// (`make image`). Tests get the same `kubeconfig`/`kubectl` as the simulator suite, plus
// `nodeName`. A machine that cannot host a node fails the run, saying why.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { TestProject } from "vitest/node";
import { clusterLeftovers, startCluster, stopCluster } from "../node/cluster.ts";
import { nodeHostingProblems } from "../node/node.ts";

declare module "vitest" {
  export interface ProvidedContext {
    nodeName: string;
    nodeIp: string;
    /** `ctr` bound to the node's containerd, as a command line. */
    ctrCommand: string[];
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const problems = nodeHostingProblems();
  if (problems.length > 0) throw new Error(`the real-node suite cannot run on this machine: ${problems.join("; ")}`);
  const dir = await mkdtemp(join(tmpdir(), "pod-decorator-node-e2e-"));
  const started = Date.now();
  // Reapers stop the cluster even if this run is killed before teardown.
  const cluster = await startCluster(dir, {
    ownerPid: process.pid,
    requireProjectImage: true,
    crds: [fileURLToPath(new URL("../../config/crd/", import.meta.url))],
    log: (line) => console.log(`[cluster] ${line}`),
  });
  console.log(`[cluster] Kubernetes ${cluster.plane.version} ready in ${((Date.now() - started) / 1000).toFixed(1)}s (${dir})`);
  process.env.POD_DECORATOR_KUBERNETES_VERSION = cluster.plane.version;
  project.provide("kubeconfig", cluster.plane.kubeconfig);
  project.provide("kubectl", cluster.plane.kubectl);
  project.provide("controlPlaneDir", dir);
  project.provide("etcdUrl", cluster.plane.etcdUrl);
  project.provide("kubernetesVersion", cluster.plane.version);
  project.provide("nodeName", cluster.node.name);
  project.provide("nodeIp", cluster.node.ip);
  project.provide("ctrCommand", cluster.node.ctrCommand);
  return async () => {
    await stopCluster(dir);
    // cluster-down's promise, checked on every run: nothing of the cluster is left on the machine.
    const leftovers = clusterLeftovers(dir);
    await rm(dir, { recursive: true, force: true });
    if (leftovers.length > 0) throw new Error(`the cluster left behind:\n  ${leftovers.join("\n  ")}`);
  };
}
