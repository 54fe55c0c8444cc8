// How a CollaSet names its pods (spec.namingStrategy.podNamingSuffixPolicy), as kube-xset does
// (synccontrols/x_utils.go NewTargetFrom, GetTargetsPrefix, IsTargetNamingSuffixPolicyPersistentSequence):
// generateName `<collaset>-` (the name alone when `<collaset>-` is no valid name); under
// PersistentSequence the name is that prefix and the instance id, so a recreated instance gets
// its name back and a pod of that name must be gone before its successor is created. Any other
// value is Random: the API server adds a random suffix.
import type { CollaSet } from "../../api/collaset.ts";
import { matchesDns1123Subdomain } from "../../api/names.ts";
import type { Pod } from "../../kube/objects.ts";

export const PERSISTENT_SEQUENCE = "PersistentSequence";

export function isPersistentSequence(collaSet: CollaSet): boolean {
  return collaSet.spec.namingStrategy?.podNamingSuffixPolicy === PERSISTENT_SEQUENCE;
}

export function podNamePrefix(collaSetName: string): string {
  // apimachinery's NameIsDNSSubdomain(prefix, true) masks the trailing dash before validating.
  return matchesDns1123Subdomain(`${collaSetName}a`) ? `${collaSetName}-` : collaSetName;
}

/** The name a pod of this instance id has under PersistentSequence. */
export function sequenceName(collaSet: CollaSet, instanceId: number): string {
  return `${podNamePrefix(collaSet.metadata.name ?? "")}${instanceId}`;
}

/**
 * Under PersistentSequence, the ids whose names pods the CollaSet does not control hold (a pod
 * that left it, say): a new pod cannot take such a name, so it takes another id.
 */
export function idsOfNamesTaken(collaSet: CollaSet, others: readonly Pod[]): Set<number> {
  const ids = new Set<number>();
  if (!isPersistentSequence(collaSet)) return ids;
  const prefix = podNamePrefix(collaSet.metadata.name ?? "");
  for (const pod of others) {
    const name = pod.metadata?.name ?? "";
    const suffix = name.startsWith(prefix) ? name.slice(prefix.length) : "";
    if (/^(0|[1-9]\d{0,8})$/.test(suffix)) ids.add(Number(suffix));
  }
  return ids;
}
