// Dependency mappers (DESIGN §7) for the CollaSet controller: which CollaSets to sync when a
// pod, a decoration or a revision changes.
import { collaSetOwnerOf } from "../../api/owners.ts";
import type { PodDecoration } from "../../api/poddecoration.ts";
import { selectorMatches } from "../../decoration/selector.ts";
import { namespacedKey, type KubeObject, type Pod } from "../../kube/objects.ts";
import type { Lister } from "../runtime/cache.ts";
import type { CachedCollaSet } from "./reconciler.ts";

/** The owning CollaSet of a pod, by its controller ownerReference. */
export function collaSetKeyOfPod(pod: Pod): string | undefined {
  const owner = collaSetOwnerOf(pod);
  return owner === undefined ? undefined : namespacedKey(pod.metadata?.namespace, owner.name);
}

/**
 * The CollaSets a decoration affects: those whose template it selects, and those its status
 * lists (pods that carry it, perhaps no longer selected). Both states of an update count.
 */
export function collaSetKeysForDecoration(collaSets: Lister<CachedCollaSet>, ...states: readonly (PodDecoration & KubeObject)[]): Set<string> {
  const keys = new Set<string>();
  for (const decoration of states) {
    const namespace = decoration.metadata.namespace ?? "";
    for (const detail of decoration.status?.details ?? []) if (detail.collaSet !== undefined) keys.add(namespacedKey(namespace, detail.collaSet));
    for (const collaSet of collaSets.list(namespace)) {
      if (selectorMatches(decoration.spec.selector, collaSet.spec.template.metadata?.labels)) keys.add(namespacedKey(namespace, collaSet.metadata.name ?? ""));
    }
  }
  return keys;
}

/**
 * For a pod no CollaSet owns: the CollaSets whose rollouts it can shift — a decoration with a
 * partition plans over every pod it matches, this one included.
 */
export function collaSetKeysForForeignPod(collaSets: Lister<CachedCollaSet>, decorations: readonly (PodDecoration & KubeObject)[], pod: Pod): Set<string> {
  const keys = new Set<string>();
  for (const decoration of decorations) {
    if (decoration.spec.updateStrategy?.rollingUpdate?.partition === undefined) continue;
    if (!selectorMatches(decoration.spec.selector, pod.metadata?.labels)) continue;
    for (const key of collaSetKeysForDecoration(collaSets, decoration)) keys.add(key);
  }
  return keys;
}

/** For a pod no CollaSet owns: the CollaSets whose scaleStrategy.podToInclude names it (it may now be allowed to join). */
export function collaSetKeysIncluding(collaSets: Lister<CachedCollaSet>, pod: Pod): Set<string> {
  const namespace = pod.metadata?.namespace ?? "";
  const name = pod.metadata?.name ?? "";
  return new Set(collaSets.list(namespace).filter((collaSet) => (collaSet.spec.scaleStrategy?.podToInclude ?? []).includes(name)).map((collaSet) => namespacedKey(namespace, collaSet.metadata.name ?? "")));
}
