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
import { podWithoutNullFields } from "../api/null-fields.ts";
import { isPresent } from "./parts/present.ts";

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
 */
export function renderPod(pod: Pod, decorations: readonly DecorationToApply[]): RenderResult {
  // A copy, read as the API server reads it: a null field is an absent one (DESIGN §10).
  const result = podWithoutNullFields(pod);
  const warnings: string[] = [];
  if (decorations.length === 0) return { pod: result, warnings, applied: [] };

  const ordered = sortInDecorationOrder(decorations, (decoration) =>
    decorationOrder({
      name: decoration.name,
      group: decoration.injectStrategy.group ?? "",
      weight: decoration.injectStrategy.weight ?? 0,
      creationTimestamp: decoration.creationTimestamp,
    }));
  const metadata: ObjectMeta = (result.metadata ??= {});
  const spec: PodSpec = (result.spec ??= { containers: [] });
  spec.containers ??= [];
  const primaryNames = new Set(spec.containers.filter(isPresent).map((container) => container.name));

  for (const decoration of ordered) {
    const warn: Warn = (path, message) => warnings.push(`PodDecoration/${decoration.name}: ${path}: ${message}`);
    const { template } = decoration;
    renderMetadata(metadata, template.metadata ?? [], warn);
    renderInitContainers(spec, template.initContainers ?? [], warn);
    renderPrimaryContainers(spec, template.primaryContainers ?? [], primaryNames, warn);
    renderSidecars(spec, template.containers ?? [], primaryNames, warn);
    renderVolumes(spec, template.volumes ?? []);
    if (template.affinity !== undefined) renderAffinity(spec, template.affinity);
    renderTolerations(spec, template.tolerations ?? []);
    renderRuntimeClass(spec, template.runtimeClassName);
  }

  const applied = ordered.map((decoration) => ({ name: decoration.name, revision: decoration.revisionName }));
  record(metadata, applied, warnings);
  return { pod: result, warnings, applied };
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
