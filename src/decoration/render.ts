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
import { decorationLabelKey, decorationLabelValue, formatInjectedContainers, INJECTED_CONTAINERS_ANNOTATION, parseInjectedContainers, podRevisions, type RecordedRevision, withRecordedRevisions } from "./recording.ts";
import { kindSlashName } from "./decoration-kind.ts";
import { podWithoutNullFields } from "../api/null-fields.ts";
import { DecorationBoundsError, DecorationError } from "./decoration-error.ts";
import type { RenderBudget } from "./engine-bounds.ts";
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
export function renderPod(pod: Pod, decorations: readonly DecorationToApply[], budget?: RenderBudget): RenderResult {
  // Read as the API server reads it: a null field is an absent one (DESIGN §10).
  return renderReadPod(podWithoutNullFields(pod), decorations, budget);
}

/**
 * renderPod of a pod already read through podWithoutNullFields: decoratePod reads a pod once and
 * may render it more than once. With a budget, throws a DecorationBoundsError when it is spent
 * before a decoration is rendered.
 */
export function renderReadPod(input: Pod, decorations: readonly DecorationToApply[], budget?: RenderBudget): RenderResult {
  if (decorations.length === 0) return { pod: input, warnings: [], applied: [] };
  const ordered = sortInDecorationOrder(decorations, (decoration) =>
    decorationOrder({
      name: decoration.name,
      group: decoration.injectStrategy.group ?? "",
      weight: decoration.injectStrategy.weight ?? 0,
      creationTimestamp: decoration.creationTimestamp,
    }));
  const result = renderInOrder(input, ordered, budget);
  const problems = podConsistencyProblems(result.pod);
  if (problems.length > 0) refuseIntroducedProblems(input, ordered, problems, budget);
  return result;
}

/**
 * Renders into a new pod, metadata and spec in the order given. Every step replaces what it
 * renders into under them, and never changes it: the rest is the input's. `visit` sees the pod
 * after each decoration, recorded as far as it goes, and stops the rendering by returning true.
 */
function renderInOrder(input: Pod, ordered: readonly DecorationToApply[], budget: RenderBudget | undefined, visit?: (pod: Pod, rendered: number) => boolean): RenderResult {
  const warnings: string[] = [];
  const metadata: ObjectMeta = { ...input.metadata };
  const spec: PodSpec = { ...input.spec, containers: input.spec?.containers ?? [] };
  const pod: Pod = { ...input, metadata, spec };
  const primaryNames = new Set(spec.containers.filter(isPresent).map((container) => container.name));
  const initPlacement = { nativeSidecars: 0 };
  const ownedMaps = { labels: false, annotations: false };

  for (let index = 0; index < ordered.length; index++) {
    const decoration = ordered[index]!;
    if (budget?.spent() === true) throw outOfTime(decoration, index, ordered.length, budget);
    const warn: Warn = (path, message) => warnings.push(`${kindSlashName(decoration.name)}: ${path}: ${message}`);
    const { template } = decoration;
    renderMetadata(metadata, template.metadata ?? [], warn, ownedMaps);
    renderInitContainers(spec, template.initContainers ?? [], initPlacement, warn);
    renderPrimaryContainers(spec, template.primaryContainers ?? [], primaryNames, warn);
    renderSidecars(spec, template.containers ?? [], primaryNames, warn);
    renderVolumes(spec, template.volumes ?? []);
    if (template.affinity !== undefined) renderAffinity(spec, template.affinity);
    renderTolerations(spec, template.tolerations ?? []);
    renderRuntimeClass(spec, template.runtimeClassName);
    if (visit !== undefined) {
      // A snapshot: the maps this render owns go on changing.
      const recorded: ObjectMeta = { ...metadata, ...(metadata.labels === undefined ? {} : { labels: { ...metadata.labels } }), ...(metadata.annotations === undefined ? {} : { annotations: { ...metadata.annotations } }) };
      record(recorded, ordered.slice(0, index + 1), [], input, spec);
      if (visit({ ...pod, metadata: recorded }, index + 1)) break;
    }
  }

  const applied = record(metadata, ordered, warnings, input, spec);
  return { pod, warnings, applied };
}

function appliedOf(decoration: DecorationToApply): AppliedDecoration {
  return { name: decoration.name, revision: decoration.revisionName };
}

function outOfTime(decoration: DecorationToApply, index: number, count: number, budget: RenderBudget): DecorationBoundsError {
  return new DecorationBoundsError(decoration, `not rendered: the time for this pod's decorations (${budget.milliseconds} ms, the request's) ran out after ${index} of ${count}`);
}

/**
 * Problems the pod had before rendering are the pod's (the API server will say so); a problem
 * rendering introduced is the decoration's that first brings it, found by rendering once more
 * and checking the pod after each decoration — only on this error path.
 */
function refuseIntroducedProblems(input: Pod, ordered: readonly DecorationToApply[], problems: readonly string[], budget: RenderBudget | undefined): void {
  const before = new Set(podConsistencyProblems(input));
  if (problems.every((problem) => before.has(problem))) return;
  let refusal: DecorationError | undefined;
  renderInOrder(input, ordered, budget, (pod, count) => {
    const introduced = podConsistencyProblems(pod).filter((problem) => !before.has(problem));
    if (introduced.length === 0) return false;
    const culprit = ordered[count - 1]!;
    const others = count > 1 ? " (after the decorations rendered before it)" : "";
    refusal = new DecorationError(culprit, `rendering revision ${culprit.revisionName} into this pod${others} would make a pod the API server refuses: ${introduced.join("; ")}`);
    return true;
  });
  if (refusal !== undefined) throw refusal;
}

/** Records the rendered decorations on the pod's metadata; returns them as applied. */
function record(metadata: ObjectMeta, rendered: readonly DecorationToApply[], warnings: string[], input: Pod, spec: PodSpec): AppliedDecoration[] {
  const previous = podRevisions({ metadata });
  warnings.push(...previous.warnings);
  const applied = rendered.map(appliedOf);
  const revisions: RecordedRevision[] = [...previous.revisions, ...applied];
  metadata.annotations = { ...withRecordedRevisions(metadata.annotations, revisions), [INJECTED_CONTAINERS_ANNOTATION]: injectedContainers(input, spec, rendered) };
  const labels: Record<string, string> = {};
  for (const { name, revision } of applied) {
    const value = decorationLabelValue(revision);
    if (value === undefined) warnings.push(`${kindSlashName(name)}: revision ${JSON.stringify(revision)} is not a valid label value; no label recorded`);
    else labels[decorationLabelKey(name)] = value;
  }
  if (Object.keys(labels).length > 0) metadata.labels = { ...metadata.labels, ...labels };
  return applied;
}

/**
 * The containers of the rendered pod that decorations injected: those injected before that are
 * still there, every sidecar rendered (added, or replacing the pod's container of its name), and
 * every init container rendered under a name the pod did not have (one it had is kept).
 */
function injectedContainers(input: Pod, spec: PodSpec, rendered: readonly DecorationToApply[]): string {
  const present = new Set<string>();
  for (const container of [...(spec.initContainers ?? []), ...spec.containers]) if (isPresent(container)) present.add(container.name);
  const injected = new Set([...parseInjectedContainers(input.metadata?.annotations?.[INJECTED_CONTAINERS_ANNOTATION])].filter((name) => present.has(name)));
  const own = new Set([...(input.spec?.initContainers ?? []), ...(input.spec?.containers ?? [])].filter(isPresent).map((container) => container.name));
  for (const { template } of rendered) {
    for (const container of template.containers ?? []) if (isPresent(container) && present.has(container.name)) injected.add(container.name);
    for (const container of template.initContainers ?? []) if (isPresent(container) && present.has(container.name) && !own.has(container.name)) injected.add(container.name);
  }
  return formatInjectedContainers(injected);
}
