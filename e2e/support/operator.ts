// `pod-decorator serve` as a child process against the e2e run's control plane (see
// serve-process.ts, which benchmarks share).
import { inject } from "vitest";
import { kubeConfig } from "./cluster.ts";
import { freePort, removeWebhookConfigurations as removeFrom, startServeProcess, troubleLines, type ServeProcess, type ServeProcessOptions } from "./serve-process.ts";

export { freePort, troubleLines };
export type Operator = ServeProcess;
export type OperatorOptions = Omit<ServeProcessOptions, "kubeconfig"> & {
  /** Another kubeconfig file (e.g. one pointing at a private API server); the run's by default. */
  kubeconfig?: string;
};

export function startOperator(options: OperatorOptions = {}): Promise<Operator> {
  return startServeProcess({ ...options, kubeconfig: options.kubeconfig ?? inject("kubeconfig") });
}

export function removeWebhookConfigurations(): Promise<void> {
  return removeFrom(kubeConfig());
}
