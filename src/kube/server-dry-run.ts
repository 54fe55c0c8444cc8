// Server-side dry-run creates: the API server's own validation and admission (webhooks
// included) judge a pod without storing it. The PodDecoration controller validates templates
// this way; the CollaSet controller checks a replacement before deleting the pod it replaces.
import { CoreV1Api, type KubeConfig, type V1Pod } from "@kubernetes/client-node";
import type { Pod } from "../api/pod.ts";
import { statusCode, statusMessage } from "./errors.ts";
import { apiClient } from "./api-client.ts";

export type DryRunVerdict = { valid: true } | { valid: false; message: string };

/** Sends a pod as a server-side dry-run create; resolves to the API server's verdict. */
export type DryRunCreate = (pod: Pod) => Promise<DryRunVerdict>;

/** Server-side dry-run create: 4xx answers are the API server's verdict, anything else is retried. */
export function serverDryRun(config: KubeConfig): DryRunCreate {
  const core = apiClient(config, CoreV1Api);
  return async (pod) => {
    try {
      await core.createNamespacedPod({ namespace: pod.metadata?.namespace ?? "default", body: pod as V1Pod, dryRun: "All" });
      return { valid: true };
    } catch (error) {
      const code = statusCode(error);
      if (code === 422 || code === 400 || code === 403) return { valid: false, message: statusMessage(error) };
      throw error;
    }
  };
}
