// The pod webhook: renders every matching PodDecoration into a pod being created
// (DESIGN §3, §5). Reads caches only; a dry-run request is decorated the same way
// because nothing here has side effects.
import { formatFieldErrors } from "../api/field-errors.ts";
import { validatePod, type Pod } from "../api/pod.ts";
import { decoratePod } from "../decoration/decorate.ts";
import { REVISIONS_ANNOTATION } from "../decoration/recording.ts";
import { allow, allowWithPatch, deny, type AdmissionRequest } from "./admission-review.ts";
import { createJsonPatch } from "./json-patch.ts";
import type { AdmissionHandler } from "./server.ts";
import { newPodRevisions, type DecorationSource } from "../decoration/updated-revisions.ts";

export interface PodMutationOptions {
  source: DecorationSource;
  /** `admit`: a pod whose decoration cannot be rendered is created undecorated, with a warning. */
  onDecorationError: "reject" | "admit";
}

export function podMutation(options: PodMutationOptions): AdmissionHandler {
  // A new pod gets the revision its decoration's rollout gives it (DESIGN §5, newPodRevision).
  const revisionFor = newPodRevisions(options.source);
  return (request) => {
    if (!isPodCreate(request)) return { response: allow(request.uid), result: "allowed" };
    const object = request.object;
    const errors = validatePod(object);
    if (errors.length > 0) {
      const metadata: unknown = object?.metadata;
      const name: unknown = typeof metadata === "object" && metadata !== null ? (metadata as { name?: unknown }).name : undefined;
      return { response: deny(request.uid, 400, formatFieldErrors("Pod", typeof name === "string" ? name : undefined, errors).join("; ")), result: "rejected" };
    }
    const original = object as Pod;
    // The revisions annotation means whoever created the pod (a CollaSet) already decided.
    if (original.metadata?.annotations?.[REVISIONS_ANNOTATION] !== undefined) return { response: allow(request.uid), result: "skipped" };

    // A pod being created may not carry its namespace yet; the request does.
    const namespace = request.namespace ?? original.metadata?.namespace ?? "default";
    const pod: Pod = { ...original, metadata: { ...original.metadata, namespace } };
    const decorations = options.source.decorations(namespace);
    if (decorations.length === 0) return { response: allow(request.uid), result: "skipped" };

    let result;
    try {
      result = decoratePod(pod, decorations, revisionFor);
    } catch (error) {
      const message = `pod-decorator: ${error instanceof Error ? error.message : String(error)}`;
      if (options.onDecorationError === "admit") return { response: allow(request.uid, [`${message}; the pod was admitted undecorated`]), result: "error" };
      return { response: deny(request.uid, 500, message), result: "error" };
    }
    if (result.applied.length === 0) return { response: allow(request.uid, result.warnings), result: "skipped" };
    // The patch applies to the object the API server holds, not to the copy given a namespace.
    const rendered = original.metadata?.namespace === undefined ? withoutNamespace(result.pod) : result.pod;
    return { response: allowWithPatch(request.uid, createJsonPatch(original, rendered), result.warnings), result: "injected" };
  };
}

function withoutNamespace(pod: Pod): Pod {
  const { namespace: _namespace, ...metadata } = pod.metadata ?? {};
  return { ...pod, metadata };
}

function isPodCreate(request: AdmissionRequest): boolean {
  return request.operation === "CREATE" && request.kind.group === "" && request.kind.kind === "Pod" && (request.subResource ?? "") === "" && request.object != null;
}
