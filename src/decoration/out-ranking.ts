// Which of its namespace's decorations a decoration would out-rank on the pods both can select
// (DESIGN §10 "Out-ranking needs the right to edit"): exclude one from their shared group,
// change what one renders, by the engine's own rules (DESIGN §3), or change a label one selects
// pods by. Judged as rendered: the labels the namespace's decorations set can bring a pod to a
// selector its own labels do not satisfy, so two selectors that no pod's own labels satisfy at
// once still overlap when decorations' labels can bridge them. Pure: admission asks the API
// server whether the writer may update each decoration named here.
import type { Container, EnvVar, Volume, VolumeMount } from "../api/kubernetes.ts";
import { sameJson } from "../api/json.ts";
import { decorationGroup, decorationWeight, primaryTargetPolicy, type MetadataPatch, type PodDecoration, type PodDecorationTemplate, type PrimaryContainerPatch } from "../api/poddecoration.ts";
import { compareDecorationOrder, type DecorationOrder, decorationOrder } from "./order.ts";
import { DEFAULT_NAMESPACE, orderOf } from "./selection.ts";
import { selectorsOverlap } from "./selector-overlap.ts";
import { decorationKey, isClusterDecoration, kindSlashName } from "./decoration-kind.ts";
import { brokenBy, keyDemands, labelsSetBy, labelWrites, type LabelWrites } from "./label-writes.ts";

export interface OutRanked {
  decoration: PodDecoration;
  /** One phrase per way it is out-ranked, naming it as `namespace/name`. */
  reasons: string[];
}

/**
 * The decorations of `candidate`'s namespace that it would out-rank, in the order given, each
 * with why. A candidate without a creation time (one being created) is the newest of all.
 * Decorations being deleted, and those whose selectors cannot select a pod the candidate's
 * selects — as rendered, with the labels `writes` says the namespace's decorations can set
 * (by default those of the candidate and `others`) — are never out-ranked.
 */
export function outRankedDecorations(candidate: PodDecoration, others: readonly PodDecoration[], writes: LabelWrites = namespaceWrites(candidate, others)): OutRanked[] {
  const namespace = candidate.metadata.namespace ?? DEFAULT_NAMESPACE;
  const key = decorationKey(candidate);
  const candidateOrder = orderOfCandidate(candidate);
  const result: OutRanked[] = [];
  for (const other of others) {
    if ((other.metadata.namespace ?? DEFAULT_NAMESPACE) !== namespace || decorationKey(other) === key) continue;
    if (other.metadata.deletionTimestamp != null || !selectorsOverlap(candidate.spec.selector, other.spec.selector, writes)) continue;
    const reasons = outRankingReasons(candidate, candidateOrder, other, referenceOf(other, namespace));
    if (reasons.length > 0) result.push({ decoration: other, reasons });
  }
  return result;
}

/**
 * Every out-ranking among a namespace's decorations: out-ranked decoration → who out-ranks it and
 * how. Only pairs that share something one of them could out-rank the other by are judged (the
 * same group, a container, volume, label or annotation name, primary-container patches, an
 * affinity, a runtime class, a label one sets and the other selects by), so a namespace of
 * decorations that touch different things costs a pass, not a judgement per pair.
 */
export function outRankingsWithin(decorations: readonly PodDecoration[], writes: LabelWrites = labelWrites(decorations)): Map<PodDecoration, { by: PodDecoration; reasons: string[] }[]> {
  const live = decorations.filter((decoration) => decoration.metadata.deletionTimestamp == null);
  const sharing = new Map<string, PodDecoration[]>();
  const readers = new Map<string, PodDecoration[]>();
  const file = (index: Map<string, PodDecoration[]>, key: string, decoration: PodDecoration) => {
    const list = index.get(key);
    if (list === undefined) index.set(key, [decoration]);
    else if (list[list.length - 1] !== decoration) list.push(decoration);
  };
  for (const decoration of live) {
    for (const key of footprint(decoration)) file(sharing, key, decoration);
    for (const key of keyDemands(decoration.spec.selector)?.keys() ?? []) file(readers, key, decoration);
  }
  const pairs = new Map<PodDecoration, Set<PodDecoration>>();
  const pair = (a: PodDecoration, b: PodDecoration) => {
    if (a === b) return;
    let set = pairs.get(a);
    if (set === undefined) pairs.set(a, (set = new Set()));
    set.add(b);
  };
  for (const members of sharing.values()) for (const a of members) for (const b of members) pair(a, b);
  for (const decoration of live) for (const [key] of labelsSetBy(decoration)) for (const reader of readers.get(key) ?? []) pair(decoration, reader);
  const result = new Map<PodDecoration, { by: PodDecoration; reasons: string[] }[]>();
  for (const [candidate, others] of pairs) {
    for (const { decoration, reasons } of outRankedDecorations(candidate, [...others], writes)) {
      const list = result.get(decoration);
      if (list === undefined) result.set(decoration, [{ by: candidate, reasons }]);
      else list.push({ by: candidate, reasons });
    }
  }
  return result;
}

/** What a decoration renders that another could out-rank it by, or it another (see outRankingReasons). */
function footprint(decoration: PodDecoration): Set<string> {
  const keys = new Set<string>();
  const group = decorationGroup(decoration);
  if (group !== "") keys.add(`group/${group}`);
  const template = decoration.spec.template ?? {};
  for (const container of [...objects<Container>(template.containers), ...objects<Container>(template.initContainers)]) keys.add(`container/${container.name}`);
  for (const patch of objects<PrimaryContainerPatch>(template.primaryContainers)) {
    if (typeof patch.name === "string") keys.add(`container/${patch.name}`);
    if (nonEmpty(patch.image)) keys.add("primary-image");
    for (const variable of objects<EnvVar>(patch.env)) keys.add(`primary-env/${variable.name}`);
    for (const mount of objects<VolumeMount>(patch.volumeMounts)) keys.add(`primary-mount/${mount.mountPath}`);
  }
  for (const volume of objects<Volume>(template.volumes)) keys.add(`volume/${volume.name}`);
  for (const patch of objects<MetadataPatch>(template.metadata)) {
    for (const key of Object.keys(patch.labels ?? {})) keys.add(`label/${key}`);
    for (const key of Object.keys(patch.annotations ?? {})) keys.add(`annotation/${key}`);
  }
  const override = template.affinity?.overrideAffinity;
  if (override?.nodeAffinity != null || (template.affinity?.nodeSelectorTerms?.length ?? 0) > 0) keys.add("nodeAffinity");
  if (override?.podAffinity != null) keys.add("podAffinity");
  if (override?.podAntiAffinity != null) keys.add("podAntiAffinity");
  if (nonEmpty(template.runtimeClassName)) keys.add("runtimeClassName");
  return keys;
}

/** The labels the candidate and the others of its namespace can set (the candidate replacing its own earlier version). */
export function namespaceWrites(candidate: PodDecoration, others: readonly PodDecoration[]): LabelWrites {
  const namespace = candidate.metadata.namespace ?? DEFAULT_NAMESPACE;
  const key = decorationKey(candidate);
  return labelWrites([candidate, ...others.filter((other) => decorationKey(other) !== key && (other.metadata.namespace ?? DEFAULT_NAMESPACE) === namespace)]);
}

/** How a message names another decoration: `namespace/name`, or `ClusterPodDecoration/name`. */
function referenceOf(decoration: PodDecoration, namespace: string): string {
  return isClusterDecoration(decoration) ? kindSlashName(decorationKey(decoration)) : `${namespace}/${decoration.metadata.name ?? ""}`;
}

function orderOfCandidate(candidate: PodDecoration): DecorationOrder {
  const order = decorationOrder({ name: decorationKey(candidate), group: decorationGroup(candidate), weight: decorationWeight(candidate), creationTimestamp: candidate.metadata.creationTimestamp });
  return candidate.metadata.creationTimestamp === undefined ? { ...order, created: Number.POSITIVE_INFINITY } : order;
}

function outRankingReasons(candidate: PodDecoration, candidateOrder: DecorationOrder, other: PodDecoration, ref: string): string[] {
  const group = decorationGroup(candidate);
  if (group !== "" && group === decorationGroup(other)) {
    const [weight, otherWeight] = [decorationWeight(candidate), decorationWeight(other)];
    if (weight > otherWeight) return [`would exclude ${ref} (same group "${group}", heavier weight ${weight} > ${otherWeight})`];
    // Lighter: wherever both match, the other applies and the candidate does not. Equal: both apply, in order.
    if (weight < otherWeight) return [];
  }
  const later = compareDecorationOrder(candidateOrder, orderOf(other)) > 0;
  const mine = candidate.spec.template ?? {};
  const theirs = other.spec.template ?? {};
  const reasons = new Set<string>();
  for (const reason of selectionChanges(candidate, other, ref)) reasons.add(reason);
  for (const reason of metadataOverrides(mine, theirs, later, ref)) reasons.add(reason);
  for (const reason of containerTakeovers(mine, theirs, later, ref)) reasons.add(reason);
  // Below, the later rendering replaces the earlier one's: only a later candidate changes the other's.
  if (later) {
    for (const reason of primaryContainerOverrides(mine, theirs, ref)) reasons.add(reason);
    for (const reason of volumeOverrides(mine, theirs, ref)) reasons.add(reason);
    for (const reason of schedulingOverrides(mine, theirs, ref)) reasons.add(reason);
  }
  return [...reasons];
}

/**
 * A label the candidate sets to a value the other's selector does not accept: a pod the other
 * selected stops matching it, and the controllers take the other's decoration off (DESIGN §5).
 */
function* selectionChanges(candidate: PodDecoration, other: PodDecoration, ref: string): Generator<string> {
  const demands = keyDemands(other.spec.selector);
  if (demands === undefined) return;
  for (const [key, value] of labelsSetBy(candidate)) {
    const demand = demands.get(key);
    if (demand !== undefined && brokenBy(demand, value)) yield `would change label "${key}" that ${ref} selects pods by`;
  }
}

/**
 * A key both set to different values: a later candidate wins with Overwrite or MergePatchJson
 * (its keys are merged on top); an earlier one wins where the other only sets absent keys
 * (Retain). An earlier candidate under the other's MergePatchJson keeps none of the other's keys.
 */
function* metadataOverrides(mine: PodDecorationTemplate, theirs: PodDecorationTemplate, later: boolean, ref: string): Generator<string> {
  for (const field of ["labels", "annotations"] as const) {
    const kind = field === "labels" ? "label" : "annotation";
    for (const patch of objects<MetadataPatch>(mine.metadata)) {
      const policy = patch.patchPolicy ?? "Retain";
      for (const [key, value] of renderedEntries(patch, field)) {
        for (const otherPatch of objects<MetadataPatch>(theirs.metadata)) {
          const otherPolicy = otherPatch.patchPolicy ?? "Retain";
          const otherValue = renderedEntries(otherPatch, field).find(([otherKey]) => otherKey === key)?.[1];
          if (otherValue === undefined || otherValue === value) continue;
          if (later && policy !== "Retain") yield `would override ${kind} "${key}" that ${ref} sets`;
          if (!later && otherPolicy === "Retain") yield `would set ${kind} "${key}" first, where ${ref} sets it only when absent (Retain)`;
        }
      }
    }
  }
}

function renderedEntries(patch: MetadataPatch, field: "labels" | "annotations"): [string, string][] {
  // Labels under MergePatchJson are skipped by rendering (and refused by validation).
  if (field === "labels" && patch.patchPolicy === "MergePatchJson") return [];
  return Object.entries(patch[field] ?? {}).filter((entry): entry is [string, string] => typeof entry[1] === "string");
}

/**
 * A later sidecar of a name replaces the other's sidecar in place (or the primary container the
 * other patches by that name). A name already taken keeps the first container: an earlier
 * candidate holding a name blocks the other's init container of that name, and its init
 * container blocks the other's sidecar of that name.
 */
function* containerTakeovers(mine: PodDecorationTemplate, theirs: PodDecorationTemplate, later: boolean, ref: string): Generator<string> {
  const myInit = containerNames(mine.initContainers);
  const mySidecars = containerNames(mine.containers);
  const theirInit = containerNames(theirs.initContainers);
  const theirSidecars = containerNames(theirs.containers);
  if (later) {
    for (const name of mySidecars) if (theirSidecars.has(name)) yield `would replace container "${name}" that ${ref} injects`;
    for (const patch of objects<PrimaryContainerPatch>(theirs.primaryContainers)) {
      if (primaryTargetPolicy(patch) === "ByName" && typeof patch.name === "string" && mySidecars.has(patch.name) && patchesSomething(patch)) {
        yield `would replace primary container "${patch.name}" that ${ref} patches`;
      }
    }
    return;
  }
  for (const name of theirInit) if (myInit.has(name) || mySidecars.has(name)) yield `would replace init container "${name}" that ${ref} injects (a name already taken keeps the first container)`;
  for (const name of theirSidecars) if (myInit.has(name)) yield `would replace container "${name}" that ${ref} injects with an init container of that name`;
}

/** On primary containers both can target, the later image, env value and mount at a path are the ones kept. */
function* primaryContainerOverrides(mine: PodDecorationTemplate, theirs: PodDecorationTemplate, ref: string): Generator<string> {
  for (const patch of objects<PrimaryContainerPatch>(mine.primaryContainers)) {
    for (const otherPatch of objects<PrimaryContainerPatch>(theirs.primaryContainers)) {
      if (!targetsOverlap(patch, otherPatch)) continue;
      if (nonEmpty(patch.image) && nonEmpty(otherPatch.image) && patch.image !== otherPatch.image) yield `would replace the image that ${ref} sets on the same primary containers`;
      for (const variable of objects<EnvVar>(patch.env)) {
        const theirsOfName = objects<EnvVar>(otherPatch.env).find((candidate) => candidate.name === variable.name);
        if (theirsOfName !== undefined && !sameJson(variable, theirsOfName)) yield `would override env "${variable.name}" that ${ref} sets on the same primary containers`;
      }
      for (const mount of objects<VolumeMount>(patch.volumeMounts)) {
        const theirsAtPath = objects<VolumeMount>(otherPatch.volumeMounts).find((candidate) => candidate.mountPath === mount.mountPath);
        if (theirsAtPath !== undefined && !sameJson(mount, theirsAtPath)) yield `would replace the volume mount at "${mount.mountPath}" that ${ref} adds to the same primary containers`;
      }
    }
  }
}

/**
 * Only two ByName patches of different names never share a target: All takes every primary
 * container, and First, Last and a name can all be the one primary container a pod has.
 */
function targetsOverlap(a: PrimaryContainerPatch, b: PrimaryContainerPatch): boolean {
  const [policyA, policyB] = [primaryTargetPolicy(a), primaryTargetPolicy(b)];
  // ByName without a name targets nothing (rendering warns).
  if ((policyA === "ByName" && !nonEmpty(a.name)) || (policyB === "ByName" && !nonEmpty(b.name))) return false;
  return policyA !== "ByName" || policyB !== "ByName" || a.name === b.name;
}

function patchesSomething(patch: PrimaryContainerPatch): boolean {
  return nonEmpty(patch.image) || (patch.env?.length ?? 0) > 0 || (patch.volumeMounts?.length ?? 0) > 0;
}

function* volumeOverrides(mine: PodDecorationTemplate, theirs: PodDecorationTemplate, ref: string): Generator<string> {
  for (const volume of objects<Volume>(mine.volumes)) {
    const theirsOfName = objects<Volume>(theirs.volumes).find((candidate) => candidate.name === volume.name);
    if (theirsOfName !== undefined && !sameJson(volume, theirsOfName)) yield `would replace volume "${volume.name}" that ${ref} adds`;
  }
}

/**
 * A later overrideAffinity sub-affinity replaces the other's, and a later nodeAffinity also drops
 * the node selector terms the other ANDed in. Tolerations only add up: nothing to override.
 */
function* schedulingOverrides(mine: PodDecorationTemplate, theirs: PodDecorationTemplate, ref: string): Generator<string> {
  const override = mine.affinity?.overrideAffinity;
  const otherOverride = theirs.affinity?.overrideAffinity;
  if (override?.nodeAffinity != null) {
    const replaced = otherOverride?.nodeAffinity != null && !sameJson(override.nodeAffinity, otherOverride.nodeAffinity);
    if (replaced || (theirs.affinity?.nodeSelectorTerms?.length ?? 0) > 0) yield `would replace the nodeAffinity that ${ref} sets`;
  }
  for (const field of ["podAffinity", "podAntiAffinity"] as const) {
    if (override?.[field] != null && otherOverride?.[field] != null && !sameJson(override[field], otherOverride[field])) yield `would replace the ${field} that ${ref} sets`;
  }
  if (nonEmpty(mine.runtimeClassName) && nonEmpty(theirs.runtimeClassName) && mine.runtimeClassName !== theirs.runtimeClassName) {
    yield `would replace runtimeClassName "${theirs.runtimeClassName}" that ${ref} sets`;
  }
}

function containerNames(list: readonly Container[] | undefined): Set<string> {
  return new Set(objects<Container>(list).map((container) => container.name).filter((name) => typeof name === "string"));
}

// Cached decorations may predate validation: list items that are not objects render nothing.
function objects<T extends object>(list: readonly T[] | null | undefined): T[] {
  return Array.isArray(list) ? list.filter((item): item is T => typeof item === "object" && item !== null) : [];
}

function nonEmpty(value: string | null | undefined): value is string {
  return typeof value === "string" && value !== "";
}
