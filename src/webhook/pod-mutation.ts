// The pod webhook: renders every matching PodDecoration into a pod being created
// (DESIGN §3, §5, §10). Reads caches only; a dry-run request is decorated the same way
// because nothing here has side effects. It never refuses a pod because of the pod: the API
// server validates pods, and every field the engine does not render into is carried through
// untouched (the patch names only what changed). Only a decoration that cannot be rendered
// can affect admission, and `onDecorationError` says how.
import type { Pod } from "../api/pod.ts";
import type { PodDecoration } from "../api/poddecoration.ts";
import { decorateReadPod } from "../decoration/decorate.ts";
import { podWithoutNullFields } from "../api/null-fields.ts";
import { DecorationError } from "../decoration/decoration-error.ts";
import { newPodRevisions, type DecorationSource } from "../decoration/updated-revisions.ts";
import { allow, allowWithPatch, deny, type AdmissionRequest } from "./admission-review.ts";
import { createJsonPatch } from "./json-patch.ts";
import { DecisionMemo, type DecisionMemoLimits } from "./decision-memo.ts";
import { replicaIdentity } from "./replica-identity.ts";
import { unrenderableReason } from "./renderable-pod.ts";
import { hasRecording, recordingOf, requesterName, withoutRecording, type RequesterTrust } from "./requester-trust.ts";
import type { AdmissionDecision, SynchronousAdmissionHandler } from "./server.ts";

export interface PodMutationOptions {
  source: DecorationSource;
  /** `admit`: a pod whose decoration cannot be rendered is created undecorated, with a warning. */
  onDecorationError: "reject" | "admit";
  /** Whether a request comes from the controller, whose bookkeeping on a pod is kept (DESIGN §5). */
  trustRequester: RequesterTrust;
  /** Told about a failure that is not a decoration's (a bug): the pod is admitted undecorated. */
  onInternalError?: (error: unknown) => void;
  /** How many recent answers are kept for pods that come again (a template's replicas). */
  memoLimits?: DecisionMemoLimits;
  /** Told each time a remembered answer is given. */
  onRemembered?: () => void;
}

type Metadata = NonNullable<Pod["metadata"]>;

export function podMutation(options: PodMutationOptions): SynchronousAdmissionHandler {
  const memo = new DecisionMemo(options.source, options.memoLimits, options.onRemembered);
  // A new pod gets the revision its decoration's rollout gives it (DESIGN §5, newPodRevision).
  const revisionFor = newPodRevisions(memo.source);
  return (request) => {
    if (!isPodCreate(request)) return { response: allow(request.uid), result: "allowed" };
    const object = request.object as Record<string, unknown>;
    const metadata = isObject(object.metadata) ? (object.metadata as Metadata) : undefined;
    const trusted = options.trustRequester(request.userInfo);
    // The CollaSet controller renders the pods it creates and records what it chose, possibly nothing.
    if (trusted && recordingOf(metadata).annotation !== undefined) return { response: allow(request.uid), result: "skipped" };

    // A pod being created may not carry its namespace yet; the request does.
    const namespace = request.namespace ?? (typeof metadata?.namespace === "string" ? metadata.namespace : undefined) ?? "default";
    const decorations = options.source.decorations(namespace);
    const forged = !trusted && hasRecording(metadata);
    if (decorations.length === 0 && !forged) return { response: allow(request.uid), result: "skipped" };

    const unrenderable = unrenderableReason(object);
    if (unrenderable !== undefined) {
      return { response: allow(request.uid, [`pod-decorator: the pod was not decorated: ${unrenderable}`]), result: "skipped" };
    }
    // Everything the answer depends on besides the decorations and revisions the memo checks
    // (the pod is known by now to nest no deeper than the JSON text can be written from).
    const identity = replicaIdentity(object);
    const key = `${namespace}\n${trusted ? "trusted" : "untrusted"}\n${forged ? requesterName(request.userInfo) : ""}\n${identity.text}`;
    return memo.answer(request.uid, namespace, key, identity.tokenVolume, decorations, () => render(request, object, namespace, decorations, forged));
  };

  function render(request: AdmissionRequest, object: Record<string, unknown>, namespace: string, decorations: readonly PodDecoration[], forged: boolean): AdmissionDecision {
    const original = object as Pod;
    // The engine reads a null field as absent, as the API server does (DESIGN §10). Read so once,
    // sharing every part without a null: the patch compares the rendered pod with this reading,
    // which keeps every null that was sent out of the patch, untouched, and tells what rendering
    // left alone by identity.
    const read = podWithoutNullFields(original);
    const given: Metadata = { ...read.metadata, namespace };
    const pod: Pod = { ...read, metadata: forged ? withoutRecording(given) : given };
    return decorate(request, original, read, pod, decorations, forged);
  }

  function decorate(request: AdmissionRequest, original: Pod, read: Pod, pod: Pod, decorations: readonly PodDecoration[], forged: boolean): AdmissionDecision {
    let result;
    try {
      result = decorateReadPod(pod, decorations, revisionFor);
    } catch (error) {
      if (!(error instanceof DecorationError)) {
        // Not the decoration's fault, so not the pod's to pay for.
        options.onInternalError?.(error);
        return { response: allow(request.uid, [`pod-decorator: internal error, the pod was admitted undecorated: ${String(error)}`]), result: "error" };
      }
      const message = `pod-decorator: ${error.message}`;
      if (options.onDecorationError === "admit") return { response: allow(request.uid, [`${message}; the pod was admitted undecorated`]), result: "error" };
      return { response: deny(request.uid, 500, message), result: "error" };
    }
    // The patch applies to the object the API server holds, not to the copy given a namespace.
    const rendered = original.metadata?.namespace === undefined ? withoutNamespace(result.pod) : result.pod;
    const warnings = [...result.warnings];
    if (forged && !sameRecording(original.metadata, rendered.metadata)) {
      warnings.unshift(
        `pod-decorator: the pod's poddecoration.kusionstack.io/revisions annotation and pd-* labels were set by ${requesterName(request.userInfo)}, ` +
          "not by pod-decorator's controller: they decide nothing and were replaced by what was rendered",
      );
    }
    const patch = createJsonPatch(read, rendered);
    if (patch.length === 0) return { response: allow(request.uid, warnings), result: "skipped" };
    return { response: allowWithPatch(request.uid, patch, warnings), result: result.applied.length > 0 ? "injected" : "allowed" };
  }
}

function sameRecording(before: Metadata | undefined, after: Metadata | undefined): boolean {
  return JSON.stringify(recordingOf(before)) === JSON.stringify(recordingOf(after));
}

function withoutNamespace(pod: Pod): Pod {
  const { namespace: _namespace, ...metadata } = pod.metadata ?? {};
  return { ...pod, metadata };
}

function isObject(value: unknown): boolean {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function isPodCreate(request: AdmissionRequest): boolean {
  return request.operation === "CREATE" && request.kind.group === "" && request.kind.kind === "Pod" && (request.subResource ?? "") === "" && request.object != null;
}
