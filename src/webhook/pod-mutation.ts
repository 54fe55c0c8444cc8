// The pod webhook: renders every matching PodDecoration into a pod being created
// (DESIGN §3, §5, §10). Reads caches only; a dry-run request is decorated the same way
// because nothing here has side effects. It never refuses a pod because of the pod: the API
// server validates pods, and every field the engine does not render into is carried through
// untouched (the patch names only what changed). Only a decoration that cannot be rendered
// can affect admission, and `onDecorationError` says how.
import type { Pod } from "../api/pod.ts";
import type { PodDecoration } from "../api/poddecoration.ts";
import { decorateReadPod } from "../decoration/decorate.ts";
import { DEFAULT_DECORATION_BOUNDS, type RenderBudget } from "../decoration/engine-bounds.ts";
import { overLimitMessage, withinNamespaceLimit } from "../decoration/namespace-limit.ts";
import { podWithoutNullFields } from "../api/null-fields.ts";
import { DecorationError } from "../decoration/decoration-error.ts";
import { newPodRevisions, type DecorationSource } from "../decoration/updated-revisions.ts";
import { allow, allowWithPatch, deny, type AdmissionRequest } from "./admission-review.ts";
import { createJsonPatch } from "./json-patch.ts";
import { DecisionMemo, type DecisionMemoLimits } from "./decision-memo.ts";
import { replicaIdentity } from "./replica-identity.ts";
import { unrenderableReason } from "./renderable-pod.ts";
import { selectorMatches } from "../decoration/selector.ts";
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
  const bounds = options.source.bounds ?? DEFAULT_DECORATION_BOUNDS;
  return (request, budget) => {
    if (!isPodCreate(request)) return { response: allow(request.uid), result: "allowed" };
    // managedFields are the API server's own bookkeeping, never rendered into or patched: a pod
    // author's deep or odd managedFields must neither make a pod unrenderable nor change its identity.
    const object = withoutManagedFields(request.object as Record<string, unknown>);
    const metadata = isObject(object.metadata) ? (object.metadata as Metadata) : undefined;
    const trusted = options.trustRequester(request.userInfo);
    // The CollaSet controller renders the pods it creates and records what it chose, possibly nothing.
    if (trusted && recordingOf(metadata).annotation !== undefined) return { response: allow(request.uid), result: "skipped" };

    // A pod being created may not carry its namespace yet; the request does, always, when the API
    // server sends it. Decorations are read from the namespace the request names and no other: a
    // hand-made review naming none learns nothing of any namespace's decorations.
    const namespace = request.namespace;
    if (namespace === undefined || namespace === "") return { response: allow(request.uid, ["pod-decorator: the request names no namespace; the pod was not decorated"]), result: "skipped" };
    const decorations = options.source.decorations(namespace);
    const forged = !trusted && hasRecording(metadata);
    if (decorations.length === 0 && !forged) return { response: allow(request.uid), result: "skipped" };

    const unrenderable = unrenderableReason(object);
    if (unrenderable !== undefined) return unrenderablePod(request, metadata, decorations, forged, unrenderable);
    // Everything the answer depends on besides the decorations and revisions the memo checks
    // (the pod is known by now to nest no deeper than the JSON text can be written from).
    const identity = replicaIdentity(object);
    const key = `${namespace}\n${trusted ? "trusted" : "untrusted"}\n${forged ? requesterName(request.userInfo) : ""}\n${identity.text}`;
    return memo.answer(request.uid, namespace, key, identity.tokenVolume, decorations, () => render(request, object, namespace, decorations, forged, budget));
  };

  /**
   * A pod the engine cannot render into (only a hand-made AdmissionReview sends one): forged
   * bookkeeping is removed all the same, and when a decoration selects the pod its failure is
   * handled as every decoration failure is (onDecorationError) — never a silent skip.
   */
  function unrenderablePod(request: AdmissionRequest, metadata: Metadata | undefined, decorations: readonly PodDecoration[], forged: boolean, reason: string): AdmissionDecision {
    const patch = forged && metadata !== undefined ? createJsonPatch({ metadata }, { metadata: withoutRecording(metadata) }) : [];
    // Labels that cannot be read could be any labels: every decoration might select the pod.
    const labels = metadata?.labels == null ? {} : isStringMap(metadata.labels) ? metadata.labels : undefined;
    const selecting = withinNamespaceLimit(decorations, bounds.maxDecorationsPerNamespace).within.filter((decoration) => decoration.metadata.deletionTimestamp == null && (labels === undefined || selectorMatches(decoration.spec.selector, labels)));
    if (selecting.length === 0) {
      const warnings = [`pod-decorator: the pod was not decorated: ${reason}`];
      return { response: admitted(request.uid, patch, warnings), result: "skipped" };
    }
    const names = selecting.map((decoration) => `${decoration.metadata.namespace ?? ""}/${decoration.metadata.name ?? ""}`).sort();
    const others = names.length === 1 ? "" : ` (also selected by ${names.slice(1, 6).join(", ")}${names.length > 6 ? ` and ${names.length - 6} more` : ""})`;
    return decorationFailed(request, patch, `pod-decorator: PodDecoration ${names[0]!}: selects the pod but cannot be rendered into it: ${reason}${others}`);
  }

  function decorationFailed(request: AdmissionRequest, patch: readonly unknown[], message: string): AdmissionDecision {
    if (options.onDecorationError === "reject") return { response: deny(request.uid, 500, message), result: "error" };
    const warnings = [`${message}; the pod was admitted undecorated`];
    return { response: admitted(request.uid, patch, warnings), result: "error" };
  }

  function render(request: AdmissionRequest, object: Record<string, unknown>, namespace: string, decorations: readonly PodDecoration[], forged: boolean, budget: RenderBudget | undefined): AdmissionDecision {
    const original = object as Pod;
    // The engine reads a null field as absent, as the API server does (DESIGN §10). Read so once,
    // sharing every part without a null: the patch compares the rendered pod with this reading,
    // which keeps every null that was sent out of the patch, untouched, and tells what rendering
    // left alone by identity.
    const read = podWithoutNullFields(original);
    const given: Metadata = { ...read.metadata, namespace };
    const pod: Pod = { ...read, metadata: forged ? withoutRecording(given) : given };
    return decorate(request, original, read, pod, decorations, forged, budget);
  }

  function decorate(request: AdmissionRequest, original: Pod, read: Pod, pod: Pod, decorations: readonly PodDecoration[], forged: boolean, budget: RenderBudget | undefined): AdmissionDecision {
    const limited = withinNamespaceLimit(decorations, bounds.maxDecorationsPerNamespace);
    let result;
    try {
      result = decorateReadPod(pod, limited.within, revisionFor, { maxSelectionRounds: bounds.maxSelectionRounds, budget });
    } catch (error) {
      // Forged bookkeeping never stays, even on a pod admitted undecorated.
      const patch = forged ? createJsonPatch(read, { ...read, metadata: withoutRecording(read.metadata ?? {}) }) : [];
      if (!(error instanceof DecorationError)) {
        // Not the decoration's fault, so not the pod's to pay for.
        options.onInternalError?.(error);
        const warnings = [`pod-decorator: internal error, the pod was admitted undecorated: ${String(error)}`];
        return { response: admitted(request.uid, patch, warnings), result: "error" };
      }
      return decorationFailed(request, patch, `pod-decorator: ${error.message}`);
    }
    // The patch applies to the object the API server holds, not to the copy given a namespace.
    const rendered = original.metadata?.namespace === undefined ? withoutNamespace(result.pod) : result.pod;
    const warnings = [...result.warnings, ...overLimitWarnings(limited.over, result.pod, pod.metadata?.namespace ?? "", limited.counted)];
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

/** The decorations over the namespace's limit that would select the rendered pod: not applied, and said so. */
function overLimitWarnings(over: readonly PodDecoration[], pod: Pod, namespace: string, counted: number): string[] {
  if (over.length === 0) return [];
  const labels = pod.metadata?.labels ?? {};
  const selecting = over.filter((decoration) => decoration.metadata.deletionTimestamp == null && selectorMatches(decoration.spec.selector, labels));
  if (selecting.length === 0) return [];
  const limit = counted - over.length;
  const names = selecting.map((decoration) => decoration.metadata.name ?? "").join(", ");
  return [`pod-decorator: PodDecoration ${names} not applied: ${overLimitMessage(namespace, counted, limit)}`];
}

function admitted(uid: string, patch: readonly unknown[], warnings: readonly string[]) {
  return patch.length === 0 ? allow(uid, warnings) : allowWithPatch(uid, patch, warnings);
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

function isStringMap(value: unknown): value is Record<string, string> {
  if (!isObject(value)) return false;
  for (const key in value as Record<string, unknown>) if (typeof (value as Record<string, unknown>)[key] !== "string") return false;
  return true;
}

function withoutManagedFields(object: Record<string, unknown>): Record<string, unknown> {
  const metadata = object.metadata;
  if (!isObject(metadata) || !("managedFields" in (metadata as Record<string, unknown>))) return object;
  const { managedFields: _managedFields, ...rest } = metadata as Record<string, unknown>;
  return { ...object, metadata: rest };
}

function isPodCreate(request: AdmissionRequest): boolean {
  return request.operation === "CREATE" && request.kind.group === "" && request.kind.kind === "Pod" && (request.subResource ?? "") === "" && request.object != null;
}
