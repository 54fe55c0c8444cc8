// Renders decoration revisions into a pod (DESIGN §3). Pure and deterministic: the input pod
// and templates are never mutated (the result shares no objects with them), and the only
// inputs are the arguments. Revisions are passed in, not read from a decoration's live spec,
// because a pod held back by a rollout renders an older, stored revision.
import type { ObjectMeta, PodSpec } from "../api/kubernetes.ts";
import type { Pod } from "../api/pod.ts";
import type { PodDecorationTemplate } from "../api/poddecoration.ts";
import { decorationOrder, sortInDecorationOrder } from "./order.ts";
import { renderInitContainers, renderPrimaryContainers, renderSidecars } from "./parts/containers.ts";
import { renderMetadata } from "./parts/metadata.ts";
import { renderAffinity, renderRuntimeClass, renderTolerations } from "./parts/scheduling.ts";
import { renderVolumes } from "./parts/volumes.ts";
import type { Warn } from "./parts/warn.ts";
import { decorationLabelKey, decorationLabelValue, formatRevisionsAnnotation, podRevisions, type RecordedRevision, REVISIONS_ANNOTATION } from "./recording.ts";
import { cloneJson } from "../api/json.ts";
import { podWithoutNullFields } from "../api/null-fields.ts";
import { DecorationError } from "./decoration-error.ts";
import { isPresent } from "./parts/present.ts";
import { podConsistencyProblems } from "./pod-consistency.ts";

/** One decoration to render, at the revision chosen for this pod. */
export interface DecorationToApply {
  name: string;
  namespace?: string | undefined;
  creationTimestamp?: string | undefined;
  /** The ControllerRevision name recorded on the pod. */
  revisionName: string;
  template: PodDecorationTemplate;
  injectStrategy: { group?: string | undefined; weight?: number | undefined };
}

export interface AppliedDecoration {
  name: string;
  revision: string;
}

export interface RenderResult {
  pod: Pod;
  warnings: string[];
  /** What was rendered, in rendering order. */
  applied: AppliedDecoration[];
}

/**
 * Renders `decorations` into a copy of `pod` in DESIGN §3 order and records them in the
 * revisions annotation and labels. The pod's containers as given are its primary containers.
 * Throws a DecorationError, naming the decoration, when the result would break a rule of
 * Kubernetes' pod validation that the pod as given did not already break (DESIGN §10).
 */
export function renderPod(pod: Pod, decorations: readonly DecorationToApply[]): RenderResult {
  // A copy, read as the API server reads it: a null field is an absent one (DESIGN §10).
  if (decorations.length === 0) return { pod: podWithoutNullFields(pod), warnings: [], applied: [] };
  const ordered = sortInDecorationOrder(decorations, (decoration) =>
    decorationOrder({
      name: decoration.name,
      group: decoration.injectStrategy.group ?? "",
      weight: decoration.injectStrategy.weight ?? 0,
      creationTimestamp: decoration.creationTimestamp,
    }));
  const result = renderInOrder(podWithoutNullFields(pod), ordered);
  const problems = podConsistencyProblems(result.pod);
  if (problems.length > 0) refuseIntroducedProblems(podWithoutNullFields(pod), ordered, problems);
  return result;
}

/** Renders into `pod` (a copy the caller owns) in the order given. */
function renderInOrder(pod: Pod, ordered: readonly DecorationToApply[]): RenderResult {
  const warnings: string[] = [];
  const metadata: ObjectMeta = (pod.metadata ??= {});
  const spec: PodSpec = (pod.spec ??= { containers: [] });
  spec.containers ??= [];
  const primaryNames = new Set(spec.containers.filter(isPresent).map((container) => container.name));
  const initPlacement = { nativeSidecars: 0 };

  for (const decoration of ordered) {
    const warn: Warn = (path, message) => warnings.push(`PodDecoration/${decoration.name}: ${path}: ${message}`);
    const { template } = decoration;
    renderMetadata(metadata, template.metadata ?? [], warn);
    renderInitContainers(spec, template.initContainers ?? [], initPlacement, warn);
    renderPrimaryContainers(spec, template.primaryContainers ?? [], primaryNames, warn);
    renderSidecars(spec, template.containers ?? [], primaryNames, warn);
    renderVolumes(spec, template.volumes ?? []);
    if (template.affinity !== undefined) renderAffinity(spec, template.affinity);
    renderTolerations(spec, template.tolerations ?? []);
    renderRuntimeClass(spec, template.runtimeClassName);
  }

  const applied = ordered.map((decoration) => ({ name: decoration.name, revision: decoration.revisionName }));
  record(metadata, applied, warnings);
  return { pod, warnings, applied };
}

/**
 * Problems the pod had before rendering are the pod's (the API server will say so); a problem
 * rendering introduced is the decoration's that first brings it, found by rendering ever
 * longer prefixes of the order — only on this error path.
 */
function refuseIntroducedProblems(input: Pod, ordered: readonly DecorationToApply[], problems: readonly string[]): void {
  const before = new Set(podConsistencyProblems(input));
  if (problems.every((problem) => before.has(problem))) return;
  for (let count = 1; count <= ordered.length; count++) {
    const introduced = podConsistencyProblems(renderInOrder(cloneJson(input), ordered.slice(0, count)).pod).filter((problem) => !before.has(problem));
    if (introduced.length === 0) continue;
    const culprit = ordered[count - 1]!;
    const others = count > 1 ? " (after the decorations rendered before it)" : "";
    throw new DecorationError(culprit, `rendering revision ${culprit.revisionName} into this pod${others} would make a pod the API server refuses: ${introduced.join("; ")}`);
  }
}

function record(metadata: ObjectMeta, applied: readonly AppliedDecoration[], warnings: string[]): void {
  const previous = podRevisions({ metadata });
  warnings.push(...previous.warnings);
  const revisions: RecordedRevision[] = [...previous.revisions, ...applied];
  (metadata.annotations ??= {})[REVISIONS_ANNOTATION] = formatRevisionsAnnotation(revisions);
  for (const { name, revision } of applied) {
    const value = decorationLabelValue(revision);
    if (value === undefined) warnings.push(`PodDecoration/${name}: revision ${JSON.stringify(revision)} is not a valid label value; no label recorded`);
    else (metadata.labels ??= {})[decorationLabelKey(name)] = value;
  }
}
