// Server-side dry-run creates: the API server's own validation and admission (webhooks
// included) judge a pod without storing it. The PodDecoration controller validates templates
// this way; the CollaSet controller checks a replacement before deleting the pod it replaces.
// The pod is posted as raw JSON, so every field reaches the API server (the generated client's
// serializer would drop fields its models lack), and the answer is the pod as it would be
// stored, so a caller can tell what the API server dropped.
import type { KubeConfig } from "@kubernetes/client-node";
import type { Pod } from "../api/pod.ts";
import { statusCode, statusMessage } from "./errors.ts";
import { RestTransport } from "./rest-transport.ts";

export type DryRunVerdict = { valid: true; stored?: Pod } | { valid: false; message: string };

/** Sends a pod as a server-side dry-run create; resolves to the API server's verdict. */
export type DryRunCreate = (pod: Pod) => Promise<DryRunVerdict>;

/** Server-side dry-run create: 4xx answers are the API server's verdict, anything else is retried. */
export function serverDryRun(config: KubeConfig): DryRunCreate {
  const rest = new RestTransport(config);
  return async (pod) => {
    const namespace = pod.metadata?.namespace ?? "default";
    try {
      const stored = await rest.postJson(`/api/v1/namespaces/${encodeURIComponent(namespace)}/pods`, { dryRun: "All" }, { ...pod, apiVersion: "v1", kind: "Pod" });
      return { valid: true, stored: stored as Pod };
    } catch (error) {
      const code = statusCode(error);
      if (code === 422 || code === 400 || code === 403) return { valid: false, message: statusMessage(error) };
      throw error;
    }
  };
}
