// A PodDisruptionBudget that allows no disruption of the `app: web` pods, for tests that show an
// eviction refused and never forced: made (and observed by the disruption controller) and removed.
import { PolicyV1Api } from "@kubernetes/client-node";
import { apply } from "./collaset-world.ts";
import { eventually, kubeConfig } from "./cluster.ts";
import { apiClient } from "../../src/kube/api-client.ts";

const policy = () => apiClient(kubeConfig(), PolicyV1Api);

/** Creates the budget `web` with maxUnavailable 0; returns once its controller has observed it. */
export async function allowNoDisruption(namespace: string): Promise<void> {
  await apply(`
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: { name: web, namespace: ${namespace} }
spec: { maxUnavailable: 0, selector: { matchLabels: { app: web } } }
`);
  await eventually(async () => ((await policy().readNamespacedPodDisruptionBudget({ namespace, name: "web" })).status?.observedGeneration === 1 ? true : undefined), 30_000, "the budget observed");
}

export async function removeDisruptionBudget(namespace: string): Promise<void> {
  await policy().deleteNamespacedPodDisruptionBudget({ namespace, name: "web" });
}
