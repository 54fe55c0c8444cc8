// make cluster-up DIR=D / make cluster-down DIR=D / the real-node suite's machine check.
//   up DIR [CRD_PATH...]   a control plane and one real node, D/kubeconfig and D/kubectl
//   down DIR               stop them; no process, mount, interface or cgroup is left
//   check                  can this machine host a node? exit 0 if so; else say why, exit 3
//   memory DIR             resident memory of every daemon, in MiB
import { controlPlaneMemory } from "../controlplane/controlplane.ts";
import { clusterLeftovers, startCluster, stopCluster } from "./cluster.ts";
import { nodeHostingProblems, nodeMemory } from "./node.ts";

const [command, dir, ...crds] = process.argv.slice(2);
try {
  if (command === "check") {
    const problems = nodeHostingProblems();
    if (problems.length > 0) {
      console.log(`this machine cannot host a real node: ${problems.join("; ")}`);
      process.exit(3);
    }
  } else if (command === "up" && dir !== undefined) {
    const started = Date.now();
    const cluster = await startCluster(dir, { crds, log: (line) => console.error(line) });
    console.error(`cluster ready in ${((Date.now() - started) / 1000).toFixed(1)}s`);
    console.log(`kubeconfig: ${cluster.plane.kubeconfig}\nkubectl:    ${cluster.plane.kubectl}\nserver:     ${cluster.plane.server}\nnode:       ${cluster.node.name} (${cluster.node.ip})\nversion:    Kubernetes ${cluster.plane.version}`);
  } else if (command === "down" && dir !== undefined) {
    await stopCluster(dir);
    const leftovers = clusterLeftovers(dir);
    if (leftovers.length > 0) {
      console.error(`left behind:\n  ${leftovers.join("\n  ")}`);
      process.exit(1);
    }
  } else if (command === "memory" && dir !== undefined) {
    console.log(JSON.stringify({ ...(await controlPlaneMemory(dir)), ...(await nodeMemory(dir)) }));
  } else {
    console.error("usage: cli.ts up DIR [CRD_PATH...] | down DIR | check | memory DIR");
    process.exit(2);
  }
} catch (error) {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
}
