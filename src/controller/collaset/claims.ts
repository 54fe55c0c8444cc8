// A CollaSet's PersistentVolumeClaims (spec.volumeClaimTemplates), decided as kuperator decides
// them (kube-xset subresources/pvc_control.go and synccontrols/sync_control.go; kuperator
// pkg/controllers/collaset/pvc_adapter.go and utils/pvc.go). Pure: claim-writes.ts carries it out.
//
// - One claim per template per instance id, generateName `<collaset>-<template>-`, the
//   CollaSet as its controller, labelled with the selector's matchLabels, kusionstack.io/control,
//   the instance id, the template's name and hash (BuildPvcWithHash).
// - A pod about to be created reuses its instance's claim whose hash is the template's, or
//   gets a new one first (CreateTargetPvcs); its volume named after the template points at it.
// - Each sync, for each live pod: a claim of an older template hash goes when neither the
//   templates nor the pod's containers name it any more, or when whenScaled is Delete and a
//   claim of the current hash took its place (DeleteTargetUnusedPvcs).
// - Scale in: when whenScaled is Delete, the claims of an instance id the CollaSet no longer
//   has go (kube-xset deletes them right after the pod, DeleteTargetPvcs); Retain keeps them,
//   owned, for the id to reuse when it comes back.
// - Claims left without owner by a CollaSet deleted under whenDeleted Retain are adopted by a
//   CollaSet whose selector matches them (AdoptPvcsLeftByRetainPolicy); deleting a CollaSet
//   under Retain first removes its ownerReference from them (ensureReclaimPvcs), which its
//   finalizer apps.kusionstack.io/pre-reclaim makes happen before the garbage collector acts.
// Both policies default to Delete (utils/pvc.go PvcPolicyWhenScaled / PvcPolicyWhenDelete).
import type { CollaSet } from "../../api/collaset.ts";
import { API_VERSION, COLLASET_KIND } from "../../api/group.ts";
import { parseLabelSelector } from "../../api/label-selector.ts";
import type { Pod } from "../../api/pod.ts";
import { cloneJson } from "../../api/json.ts";
import { controllerOf, type PersistentVolumeClaim, type Pod as LivePod } from "../../kube/objects.ts";
import { claimTemplateHash } from "../../revision/claim-template-hash.ts";
import { claimTemplateName, isPlaceholderClaimName } from "../../revision/collaset-revision-data.ts";
import { CONTROL_LABEL } from "../lifecycle/pod-ops-lifecycle.ts";
import { isTerminating } from "../pod-availability.ts";
import { INSTANCE_ID_LABEL, instanceIdOf, isAwaitingReplacement } from "./pod-state.ts";
import { holdsInstanceId } from "./naming.ts";

/** kube-api PvcTemplateLabelKey. */
export const PVC_TEMPLATE_LABEL = "collaset.kusionstack.io/pvc-template-name";
/** kube-api PvcTemplateHashLabelKey. */
export const PVC_TEMPLATE_HASH_LABEL = "collaset.kusionstack.io/pvc-template-hash";
/** kube-api PodOrphanedIndicateLabelKey: a claim so labelled is never adopted. */
export const ORPHANED_LABEL = "collaset.kusionstack.io/orphaned";
/** kuperator's CollaSet finalizer (collaset_controller.go preReclaimFinalizer). */
export const RECLAIM_FINALIZER = "apps.kusionstack.io/pre-reclaim";

export type RetentionPolicy = "Retain" | "Delete";

export interface ClaimTemplate {
  name: string;
  hash: string;
  template: Record<string, unknown>;
}

export function claimTemplates(collaSet: CollaSet): ClaimTemplate[] {
  return (collaSet.spec.volumeClaimTemplates ?? []).map((template) => ({ name: claimTemplateName(template), hash: claimTemplateHash(template), template }));
}

export function retentionPolicy(collaSet: CollaSet): { whenScaled: RetentionPolicy; whenDeleted: RetentionPolicy } {
  const policy = collaSet.spec.scaleStrategy?.persistentVolumeClaimRetentionPolicy;
  return { whenScaled: policy?.whenScaled === "Retain" ? "Retain" : "Delete", whenDeleted: policy?.whenDeleted === "Retain" ? "Retain" : "Delete" };
}

/** Whether deleting the CollaSet must wait for its claims to be let go (whenDeleted Retain). */
export function needsReclaimFinalizer(collaSet: CollaSet): boolean {
  return claimTemplates(collaSet).length > 0 && retentionPolicy(collaSet).whenDeleted === "Retain";
}

/** The claim to create for `template` and an instance id. */
export function newClaim(collaSet: CollaSet, template: ClaimTemplate, instanceId: number): PersistentVolumeClaim {
  const { name = "", namespace, uid = "" } = collaSet.metadata;
  const claim = cloneJson(template.template) as PersistentVolumeClaim;
  const metadata = claim.metadata ?? {};
  claim.apiVersion = "v1";
  claim.kind = "PersistentVolumeClaim";
  claim.metadata = {
    ...(metadata.annotations === undefined ? {} : { annotations: metadata.annotations }),
    generateName: `${name}-${template.name}-`,
    namespace,
    labels: {
      ...metadata.labels,
      ...collaSet.spec.selector.matchLabels,
      [CONTROL_LABEL]: "true",
      [PVC_TEMPLATE_HASH_LABEL]: template.hash,
      [INSTANCE_ID_LABEL]: String(instanceId),
      [PVC_TEMPLATE_LABEL]: template.name,
    },
    ownerReferences: [...(metadata.ownerReferences ?? []), { apiVersion: API_VERSION, kind: COLLASET_KIND, name, uid, controller: true, blockOwnerDeletion: true }],
  };
  delete claim.status;
  return claim;
}

/** The template a claim was made of: its label, else the name (`<collaset>-<template>-<suffix>`, ExtractPvcTmpName). */
export function claimTemplateOf(collaSetName: string, claim: PersistentVolumeClaim): string | undefined {
  const label = claim.metadata?.labels?.[PVC_TEMPLATE_LABEL];
  if (label !== undefined) return label;
  const name = claim.metadata?.name ?? "";
  const rest = name.slice(0, Math.max(0, name.lastIndexOf("-")));
  return rest.startsWith(`${collaSetName}-`) ? rest.slice(collaSetName.length + 1) : undefined;
}

interface InstanceClaims {
  /** By template name: the claim of the template's current hash. */
  updated: Map<string, PersistentVolumeClaim>;
  /** By template name: a claim of another hash (or of a template no longer there). */
  old: Map<string, PersistentVolumeClaim>;
}

/** An instance's live claims that carry a template hash, split by whether it is the current one (classifyTargetPvcs). */
export function instanceClaims(collaSet: CollaSet, claims: readonly PersistentVolumeClaim[], instanceId: number): InstanceClaims {
  const hashes = new Map(claimTemplates(collaSet).map((template) => [template.name, template.hash]));
  const result: InstanceClaims = { updated: new Map(), old: new Map() };
  for (const claim of [...claims].sort(byAge)) {
    const labels = claim.metadata?.labels ?? {};
    if (claim.metadata?.deletionTimestamp != null || labels[INSTANCE_ID_LABEL] !== String(instanceId)) continue;
    const hash = labels[PVC_TEMPLATE_HASH_LABEL];
    const template = claimTemplateOf(collaSet.metadata.name ?? "", claim);
    if (hash === undefined || template === undefined) continue;
    const into = hashes.get(template) === hash ? result.updated : result.old;
    // Of two claims for one template, the older one is kept in use.
    if (!into.has(template)) into.set(template, claim);
  }
  return result;
}

/** What a pod about to be created needs: claims to reuse (template → claim name) and claims to create first. */
export function claimsForInstance(collaSet: CollaSet, claims: readonly PersistentVolumeClaim[], instanceId: number): { reuse: Map<string, string>; create: { template: string; claim: PersistentVolumeClaim }[] } {
  const { updated } = instanceClaims(collaSet, claims, instanceId);
  const reuse = new Map<string, string>();
  const create: { template: string; claim: PersistentVolumeClaim }[] = [];
  for (const template of claimTemplates(collaSet)) {
    const existing = updated.get(template.name);
    if (existing !== undefined) reuse.set(template.name, existing.metadata?.name ?? "");
    else create.push({ template: template.name, claim: newClaim(collaSet, template, instanceId) });
  }
  return { reuse, create };
}

/**
 * The pod with its claim volumes pointing at the instance's claims (template → claim name):
 * a volume per claim, in front (CreateTargetPvcs); a placeholder left from a revision whose
 * template the CollaSet no longer has points at the instance's claim of that name if one is
 * left, else goes (a container that mounts it makes the API server refuse the pod, as there).
 */
export function withClaimVolumes(pod: Pod, claimNames: ReadonlyMap<string, string>, leftover: ReadonlyMap<string, string> = new Map()): Pod {
  const bound = cloneJson(pod);
  const spec = bound.spec ?? { containers: [] };
  const others = (spec.volumes ?? []).flatMap((volume) => {
    if (claimNames.has(volume.name)) return [];
    if (!isPlaceholderClaimName((volume as { persistentVolumeClaim?: { claimName?: string } }).persistentVolumeClaim?.claimName)) return [volume];
    const claimName = leftover.get(volume.name);
    return claimName === undefined ? [] : [{ ...volume, persistentVolumeClaim: { claimName } }];
  });
  spec.volumes = [...[...claimNames].map(([name, claimName]) => ({ name, persistentVolumeClaim: { claimName } })), ...others];
  bound.spec = spec;
  return bound;
}

export interface ClaimDeletion {
  claim: PersistentVolumeClaim;
  reason: string;
}

/**
 * The claims to delete now. `pods` are the CollaSet's pods, terminating ones included; `claims`
 * those it controls. Nothing is judged while an owned pod has no instance id yet.
 */
export function claimsToDelete(collaSet: CollaSet, pods: readonly LivePod[], claims: readonly PersistentVolumeClaim[]): ClaimDeletion[] {
  const deletions = new Map<string, ClaimDeletion>();
  const remove = (claim: PersistentVolumeClaim, reason: string) => {
    const name = claim.metadata?.name ?? "";
    if (!deletions.has(name) && claim.metadata?.deletionTimestamp == null) deletions.set(name, { claim, reason });
  };
  const { whenScaled } = retentionPolicy(collaSet);
  const templateNames = new Set(claimTemplates(collaSet).map((template) => template.name));
  const active = pods.filter((pod) => !isTerminating(pod) || isAwaitingReplacement(pod));
  if (active.some((pod) => instanceIdOf(pod) === undefined)) return [];

  for (const pod of pods.filter((item) => !isTerminating(item))) {
    const { updated, old } = instanceClaims(collaSet, claims, instanceIdOf(pod)!);
    const mounted = new Set((pod.spec?.containers ?? []).flatMap((container) => (container.volumeMounts ?? []).map((mount) => mount.name)));
    for (const [template, claim] of old) {
      if (!mounted.has(template) && !templateNames.has(template)) remove(claim, `no template and no container of pod ${pod.metadata?.name ?? ""} names ${template} any more`);
      else if (whenScaled === "Delete" && updated.has(template)) remove(claim, `claim ${updated.get(template)!.metadata?.name ?? ""} of the current ${template} template took its place`);
    }
  }

  if (whenScaled === "Delete") {
    // The ids the CollaSet keeps: those a pod has, and the smallest free ones its missing pods will take.
    // A pod on its way out lets its id go (naming.ts): its claims go with it, as kube-xset deletes them right after the pod.
    const withPods = new Set(pods.filter((pod) => holdsInstanceId(collaSet, pod)).map(instanceIdOf).filter((id) => id !== undefined));
    const activeIds = new Set(active.map(instanceIdOf));
    const wanted = new Set(withPods);
    for (let id = 0, missing = (collaSet.spec.replicas ?? 0) - activeIds.size; missing > 0; id++) {
      if (withPods.has(id)) continue;
      wanted.add(id);
      missing--;
    }
    for (const claim of claims) {
      const id = Number(claim.metadata?.labels?.[INSTANCE_ID_LABEL] ?? Number.NaN);
      if (Number.isInteger(id) && !wanted.has(id)) remove(claim, `instance ${id} was scaled in`);
    }
  }
  return [...deletions.values()];
}

/** Claims without an owner that a CollaSet deleted under whenDeleted Retain left, which this one adopts. */
export function claimsToAdopt(collaSet: CollaSet, claims: readonly PersistentVolumeClaim[]): PersistentVolumeClaim[] {
  if (claimTemplates(collaSet).length === 0) return [];
  const selector = parseLabelSelector(collaSet.spec.selector);
  if (!selector.ok || collaSet.spec.selector.matchLabels === undefined) return [];
  return claims.filter((claim) => {
    const labels = claim.metadata?.labels ?? {};
    return (claim.metadata?.ownerReferences ?? []).length === 0
      && claim.metadata?.deletionTimestamp == null
      && labels[CONTROL_LABEL] === "true"
      && labels[ORPHANED_LABEL] === undefined
      && labels[INSTANCE_ID_LABEL] !== undefined
      && labels[PVC_TEMPLATE_HASH_LABEL] !== undefined
      && selector.matches(labels);
  });
}

/** Whether the CollaSet (by uid) controls the claim. */
export function isControlledBy(claim: PersistentVolumeClaim, uid: string | undefined): boolean {
  return uid !== undefined && controllerOf(claim)?.uid === uid;
}

function byAge(a: PersistentVolumeClaim, b: PersistentVolumeClaim): number {
  const [x, y] = [a.metadata?.creationTimestamp ?? "", b.metadata?.creationTimestamp ?? ""];
  if (x !== y) return x < y ? -1 : 1;
  const [m, n] = [a.metadata?.name ?? "", b.metadata?.name ?? ""];
  return m < n ? -1 : m > n ? 1 : 0;
}
