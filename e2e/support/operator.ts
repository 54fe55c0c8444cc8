// `pod-decorator serve` as a child process against the e2e run's control plane (see
// serve-process.ts, which benchmarks and the demo share).
import { inject } from "vitest";
import { kubeConfig } from "./cluster.ts";
import { freePort } from "../controlplane/processes.ts";
import { removeWebhookConfigurations as removeFrom, startServeProcess, troubleLines, type ServeProcess, type ServeProcessOptions } from "./serve-process.ts";

export { freePort, troubleLines };
export type Operator = ServeProcess;
export type OperatorOptions = Omit<ServeProcessOptions, "kubeconfig" | "adminKubeconfig"> & {
  /** serve's kubeconfig, i.e. its identity and API server (default: the run's admin kubeconfig). */
  kubeconfig?: string;
};

/**
 * Rollout stories check what the controllers decide, not how long a pod drains: PodOpsLifecycle
 * runs with no drain delay unless the test sets one (the traffic tests on the real node do).
 */
export function startOperator(options: OperatorOptions = {}): Promise<Operator> {
  const args = options.args ?? [];
  const drain = args.some((arg) => arg.startsWith("--lifecycle-drain-delay")) ? [] : ["--lifecycle-drain-delay=0s"];
  return startServeProcess({ ...options, args: [...drain, ...args], kubeconfig: options.kubeconfig ?? inject("kubeconfig"), adminKubeconfig: inject("kubeconfig") });
}

export function removeWebhookConfigurations(): Promise<void> {
  return removeFrom(kubeConfig());
}
