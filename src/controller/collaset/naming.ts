// How a CollaSet names its pods (spec.namingStrategy.podNamingSuffixPolicy), as kube-xset does
// (synccontrols/x_utils.go NewTargetFrom, GetTargetsPrefix, IsTargetNamingSuffixPolicyPersistentSequence):
// generateName `<collaset>-` (the name alone when `<collaset>-` is no valid name); under
// PersistentSequence the name is that prefix and the instance id, so a recreated instance gets
// its name back and a pod of that name must be gone before its successor is created. Any other
// value is Random: the API server adds a random suffix.
import type { CollaSet } from "../../api/collaset.ts";
import { matchesDns1123Subdomain } from "../../api/names.ts";
import type { Pod } from "../../kube/objects.ts";
import { isTerminating } from "../pod-availability.ts";
import { isAwaitingReplacement } from "./pod-state.ts";

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

/**
 * Whether the pod holds its instance id: a live pod does, and so does one deleted for recreation
 * (its replacement takes the id back). Any other pod on its way out lets its id go at once, as
 * kube-xset does (a terminating target is not among its active targets, and a scaled-in one's
 * id is reclaimed), so an id that comes back finds the claims it retained, and a replaced pod's
 * id leaves the ResourceContext when the replace is done. Under PersistentSequence the id is the
 * pod's name, which the old pod holds until it is gone.
 */
export function holdsInstanceId(collaSet: CollaSet, pod: Pod): boolean {
  return !isTerminating(pod) || isAwaitingReplacement(pod) || isPersistentSequence(collaSet);
}
