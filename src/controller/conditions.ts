// Status conditions as apimachinery's SetStatusCondition writes them: lastTransitionTime moves
// only when the condition's status changes, so a status rewritten every reconcile is stable.
import type { Condition } from "../api/kubernetes.ts";

export type ConditionWithoutTime = Omit<Condition, "lastTransitionTime" | "observedGeneration">;

export function withTransition(condition: ConditionWithoutTime, previous: readonly Condition[] | undefined, now: string, generation: number | undefined): Condition {
  const before = previous?.find((item) => item.type === condition.type);
  const lastTransitionTime = before !== undefined && before.status === condition.status && before.lastTransitionTime !== undefined ? before.lastTransitionTime : now;
  return { ...condition, ...(generation === undefined ? {} : { observedGeneration: generation }), lastTransitionTime };
}
