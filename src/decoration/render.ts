// Renders decoration revisions into a pod (DESIGN §3). Pure and deterministic: the input pod
// and templates are never mutated, and the only inputs are the arguments. The rendered pod
// shares every part rendering left alone with the input pod (what it renders into is new, and
// shares nothing with the templates), so comparing the two costs only what changed.
// Revisions are passed in, not read from a decoration's live spec, because a pod held back by
// a rollout renders an older, stored revision.
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
  /** Read-only: it shares the parts rendering did not change with the input pod. */
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
  // Read as the API server reads it: a null field is an absent one (DESIGN §10).
  return renderReadPod(podWithoutNullFields(pod), decorations);
}

/** renderPod of a pod already read through podWithoutNullFields: decoratePod reads a pod once and may render it more than once. */
export function renderReadPod(input: Pod, decorations: readonly DecorationToApply[]): RenderResult {
  if (decorations.length === 0) return { pod: input, warnings: [], applied: [] };
  const ordered = sortInDecorationOrder(decorations, (decoration) =>
    decorationOrder({
      name: decoration.name,
      group: decoration.injectStrategy.group ?? "",
      weight: decoration.injectStrategy.weight ?? 0,
      creationTimestamp: decoration.creationTimestamp,
    }));
  const result = renderInOrder(input, ordered);
  const problems = podConsistencyProblems(result.pod);
  if (problems.length > 0) refuseIntroducedProblems(input, ordered, problems);
  return result;
}

/**
 * Renders into a new pod, metadata and spec in the order given. Every step replaces what it
 * renders into under them, and never changes it: the rest is the input's.
 */
function renderInOrder(input: Pod, ordered: readonly DecorationToApply[]): RenderResult {
  const warnings: string[] = [];
  const metadata: ObjectMeta = { ...input.metadata };
  const spec: PodSpec = { ...input.spec, containers: input.spec?.containers ?? [] };
  const pod: Pod = { ...input, metadata, spec };
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
    const introduced = podConsistencyProblems(renderInOrder(input, ordered.slice(0, count)).pod).filter((problem) => !before.has(problem));
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
  metadata.annotations = { ...metadata.annotations, [REVISIONS_ANNOTATION]: formatRevisionsAnnotation(revisions) };
  const labels: Record<string, string> = {};
  for (const { name, revision } of applied) {
    const value = decorationLabelValue(revision);
    if (value === undefined) warnings.push(`PodDecoration/${name}: revision ${JSON.stringify(revision)} is not a valid label value; no label recorded`);
    else labels[decorationLabelKey(name)] = value;
  }
  if (Object.keys(labels).length > 0) metadata.labels = { ...metadata.labels, ...labels };
}
