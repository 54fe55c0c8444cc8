// `pod-decorator serve` as a child process against the e2e run's control plane (see
// serve-process.ts, which benchmarks and the demo share).
import { clients, eventually, kubeConfig } from "./cluster.ts";
import { freePort } from "../controlplane/processes.ts";
import { isAlreadyExists } from "../../src/kube/errors.ts";
import { createKubeClient } from "../../src/kube/client.ts";
import { expect, inject } from "vitest";
import { PodWatch } from "./pod-watch.ts";
import { removeWebhookConfigurations as removeFrom, SERVE_NAMESPACE as OPERATOR_NAMESPACE, startServeProcess, troubleLines, type ServeProcess, type ServeProcessOptions } from "./serve-process.ts";

export { freePort, OPERATOR_NAMESPACE, troubleLines };
export type Operator = ServeProcess;
export type OperatorOptions = Omit<ServeProcessOptions, "kubeconfig" | "adminKubeconfig"> & {
  /** serve's kubeconfig, i.e. its identity and API server (default: the run's admin kubeconfig). */
  kubeconfig?: string;
};

/**
 * Rollout stories check what the controllers decide, not how long a pod drains: PodOpsLifecycle
 * runs with no drain delay unless the test sets one (the traffic tests on the real node do).
 */
export async function startOperator(options: OperatorOptions = {}): Promise<Operator> {
  const args = options.args ?? [];
  const drain = args.some((arg) => arg.startsWith("--lifecycle-drain-delay")) ? [] : ["--lifecycle-drain-delay=0s"];
  await ensureOperatorNamespace();
  return await startServeProcess({ ...options, args: [...drain, ...args], kubeconfig: options.kubeconfig ?? inject("kubeconfig"), adminKubeconfig: inject("kubeconfig") });
}

/**
 * Runs `story` with an operator and a watch of `namespace`'s pods; after it, `beforeStop` (e.g.
 * releasing what the story held), then both stopped, the operator asserted to exit cleanly.
 */
export async function withOperatorWatching(
  namespace: string,
  options: OperatorOptions,
  story: (watch: PodWatch) => Promise<void>,
  beforeStop?: (watch: PodWatch) => Promise<void>,
): Promise<void> {
  const operator = await startOperator(options);
  const watch = await PodWatch.start(createKubeClient(kubeConfig()), namespace);
  try {
    await story(watch);
  } finally {
    await beforeStop?.(watch);
    await watch.stop();
    expect(await operator.stop()).toBe(0);
  }
}

/**
 * Makes serve's namespace exist and stay. Another file may have just deleted it (the chart's
 * uninstall does): while it terminates, creating it is refused as existing, and moments later it
 * is gone, with serve unable to take its Lease for the rest of the test. So a terminating
 * namespace is waited out and created again.
 */
async function ensureOperatorNamespace(): Promise<void> {
  const core = clients().core;
  await eventually(async () => {
    try {
      await core.createNamespace({ body: { metadata: { name: OPERATOR_NAMESPACE } } });
      return true;
    } catch (error) {
      if (!isAlreadyExists(error)) throw error;
    }
    const existing = await core.readNamespace({ name: OPERATOR_NAMESPACE });
    return existing.metadata?.deletionTimestamp == null ? true : undefined;
  }, 90_000, `namespace ${OPERATOR_NAMESPACE} to exist and not be terminating`);
}

export function removeWebhookConfigurations(): Promise<void> {
  return removeFrom(kubeConfig());
}
