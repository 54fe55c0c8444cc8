// Dependency mappers (DESIGN §7): which decorations must be reconciled when a pod or a
// revision changes.
import { selectorMatches } from "../../decoration/selector.ts";
import { objectKey, type Pod } from "../../kube/objects.ts";
import type { Lister } from "../runtime/cache.ts";
import type { CachedDecoration } from "./reconciler.ts";
import { recordedRevisions } from "../../decoration/recording.ts";
import { decorationsSelectable } from "./pod-indexes.ts";

/**
 * The decorations that select any of the given states of a pod (before and after a label
 * change), or that the pod records: each one's counts or finalizer may depend on the pod.
 */
export function podDecorationKeysForPod(decorations: Lister<CachedDecoration>, states: readonly Pod[]): Set<string> {
  const keys = new Set<string>();
  for (const pod of states) {
    const namespace = pod.metadata?.namespace ?? "";
    for (const name of recordedRevisions(pod)?.keys() ?? []) {
      const decoration = decorations.get(namespace, name);
      if (decoration !== undefined) keys.add(objectKey(decoration));
    }
    for (const decoration of decorationsSelectable(decorations, pod)) {
      if (selectorMatches(decoration.spec.selector, pod.metadata?.labels)) keys.add(objectKey(decoration));
    }
  }
  return keys;
}
