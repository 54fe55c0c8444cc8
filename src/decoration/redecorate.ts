// What changing the decoration revisions of a live pod means (DESIGN §5), for pods whose owner
// is not ours: no template of the pod is at hand, only the pod as its owner and the webhook
// made it. A change is made in place only when every decoration that changes differs between
// its two revisions in nothing but the values of images — of containers, of native sidecars
// (init containers with `restartPolicy: Always`), of primary-container patches — and labels or
// annotations set by Retain or Overwrite: what the kubelet really does in place. Then the two
// renders to compare are made on one base: the live pod without the containers any recorded
// decoration injects, without the metadata the old revisions put there, and without the
// changing decorations' records. Pure.
import { cloneJson, sameJson } from "../api/json.ts";
import type { Pod } from "../api/pod.ts";
import type { MetadataPatch, PodDecorationTemplate } from "../api/poddecoration.ts";
import { renderMetadata } from "./parts/metadata.ts";
import { CLUSTER_REVISIONS_ANNOTATION, decorationLabelKey, podRevisions, REVISIONS_ANNOTATION, withRecordedRevisions } from "./recording.ts";
import { renderPod, type DecorationToApply } from "./render.ts";

/** One decoration whose revision on the pod changes: from what it records (none: it records nothing) to its target (none: it goes). */
export interface RevisionChange {
  name: string;
  from: DecorationToApply | undefined;
  to: DecorationToApply | undefined;
}

/**
 * Why the change cannot be made in place, or undefined when it can: naming the decoration and
 * the first part that differs beyond images and metadata.
 */
export function notInPlace(change: RevisionChange): string | undefined {
  const [from, to] = [inPlaceInvariant(change.from), inPlaceInvariant(change.to)];
  if (sameJson(from, to)) return undefined;
  const fromRevision = change.from?.revisionName ?? "no revision";
  const toRevision = change.to?.revisionName ?? "no revision";
  const parts = Object.keys({ ...from, ...to }).filter((key) => !sameJson(from[key], to[key])).sort();
  return `decoration ${change.name} from ${fromRevision} to ${toRevision} changes ${parts.join(", ")}: more than images and labels or annotations`;
}

/**
 * What must stay equal for a change in place: the template without image values (their
 * presence stays), without Retain and Overwrite metadata, and the inject strategy.
 */
function inPlaceInvariant(decoration: DecorationToApply | undefined): Record<string, unknown> {
  if (decoration === undefined) return {};
  const { metadata, containers, initContainers, primaryContainers, ...rest } = decoration.template;
  const invariant: Record<string, unknown> = { ...rest };
  const mergePatches = (metadata ?? []).filter((patch) => patch.patchPolicy === "MergePatchJson");
  if (mergePatches.length > 0) invariant.metadata = mergePatches;
  if (containers !== undefined && containers.length > 0) invariant.containers = containers.map(withoutImageValue);
  if (initContainers !== undefined && initContainers.length > 0) {
    invariant.initContainers = initContainers.map((container) => (container.restartPolicy === "Always" ? withoutImageValue(container) : container));
  }
  if (primaryContainers !== undefined && primaryContainers.length > 0) invariant.primaryContainers = primaryContainers.map(withoutImageValue);
  const { group = "", weight = 0 } = decoration.injectStrategy;
  if (group !== "" || weight !== 0) invariant.injectStrategy = { group, weight };
  return invariant;
}

function withoutImageValue<C extends { image?: string | undefined }>(container: C): C {
  return container.image === undefined ? container : { ...container, image: "(image)" };
}

/**
 * The pod rendered with the revisions it records and with its targets, on one base, for
 * controller/pod-update.ts to compare and turn into a patch of the live pod. `recordedTemplates`
 * are the templates of every revision the pod records (their containers are left out of the
 * base). Throws a DecorationError when a target cannot be rendered into the pod.
 */
export function redecorate(live: Pod, changes: readonly RevisionChange[], recordedTemplates: readonly PodDecorationTemplate[]): { from: Pod; to: Pod } {
  const base = baseOf(live, changes, recordedTemplates);
  const present = (list: readonly (DecorationToApply | undefined)[]) => list.filter((decoration) => decoration !== undefined);
  return {
    from: renderPod(base, present(changes.map((change) => change.from))).pod,
    to: renderPod(base, present(changes.map((change) => change.to))).pod,
  };
}

function baseOf(live: Pod, changes: readonly RevisionChange[], recordedTemplates: readonly PodDecorationTemplate[]): Pod {
  const base = cloneJson(live);
  const metadata = (base.metadata ??= {});
  // Injected containers go: rendered again on both sides, and a primary-container patch must
  // not count another decoration's sidecar among the pod's own containers.
  const injected = new Set(recordedTemplates.flatMap((template) => [...(template.containers ?? []), ...(template.initContainers ?? [])].map((container) => container.name)));
  const spec = (base.spec ??= { containers: [] });
  spec.containers = (spec.containers ?? []).filter((container) => !injected.has(container.name));
  if (spec.initContainers !== undefined) spec.initContainers = spec.initContainers.filter((container) => !injected.has(container.name));
  // What an old revision set and the pod still holds as it set it is that revision's, not the pod's.
  for (const change of changes) {
    if (change.from !== undefined) withoutValuesOf(metadata, change.from.template.metadata ?? []);
    if (metadata.labels !== undefined) delete metadata.labels[decorationLabelKey(change.name)];
  }
  const changing = new Set(changes.map((change) => change.name));
  const kept = podRevisions(live).revisions.filter((entry) => !changing.has(entry.name));
  if (kept.length > 0 || metadata.annotations?.[REVISIONS_ANNOTATION] !== undefined || metadata.annotations?.[CLUSTER_REVISIONS_ANNOTATION] !== undefined) metadata.annotations = withRecordedRevisions(metadata.annotations, kept);
  return base;
}

function withoutValuesOf(metadata: NonNullable<Pod["metadata"]>, patches: readonly MetadataPatch[]): void {
  const set: NonNullable<Pod["metadata"]> = {};
  renderMetadata(set, patches.filter((patch) => patch.patchPolicy !== "MergePatchJson"), () => undefined);
  for (const field of ["labels", "annotations"] as const) {
    const current = metadata[field];
    if (current === undefined) continue;
    for (const [key, value] of Object.entries(set[field] ?? {})) if (current[key] === value) delete current[key];
  }
}
