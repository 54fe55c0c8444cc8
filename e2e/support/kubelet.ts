// The kubelet a rollout story runs against. In the `node` project (vitest.config.ts) its global
// setup has started a real node and provides its name; elsewhere a simulated kubelet is started
// for the file. The story files run in both projects, so every rollout story has a real-node
// counterpart without a second copy. Their images exist on the real node
// (e2e/node/test-images.ts); the simulator runs any name.
import { inject } from "vitest";
import { kubeConfig } from "./cluster.ts";
import { startNodeSimulator } from "./node-simulator.ts";

export interface Kubelet {
  kind: "real" | "simulated";
  nodeName: string;
  stop(): Promise<void>;
}

export async function startKubelet(): Promise<Kubelet> {
  const realNode = inject("nodeName") as string | undefined;
  if (realNode !== undefined) return { kind: "real", nodeName: realNode, stop: () => Promise.resolve() };
  const simulator = await startNodeSimulator({ config: kubeConfig(), restartDelayMs: 200 });
  return { kind: "simulated", nodeName: simulator.nodeName, stop: () => simulator.stop() };
}
