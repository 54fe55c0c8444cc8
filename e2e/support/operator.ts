// `pod-decorator serve` as a child process against the e2e run's control plane (see
// serve-process.ts, which benchmarks and the demo share).
import { inject } from "vitest";
import { kubeConfig } from "./cluster.ts";
import { freePort, removeWebhookConfigurations as removeFrom, startServeProcess, troubleLines, type ServeProcess, type ServeProcessOptions } from "./serve-process.ts";

export { freePort, troubleLines };
export type Operator = ServeProcess;
export type OperatorOptions = Omit<ServeProcessOptions, "kubeconfig" | "adminKubeconfig"> & {
  /** serve's kubeconfig, i.e. its identity and API server (default: the run's admin kubeconfig). */
  kubeconfig?: string;
};

export function startOperator(options: OperatorOptions = {}): Promise<Operator> {
  return startServeProcess({ ...options, kubeconfig: options.kubeconfig ?? inject("kubeconfig"), adminKubeconfig: inject("kubeconfig") });
}

export function removeWebhookConfigurations(): Promise<void> {
  return removeFrom(kubeConfig());
}
