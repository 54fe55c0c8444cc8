// The hook by which PodTransitionRules gate PodOpsLifecycle's stages (kuperator's checker): the
// lifecycle asks which rules select a pod for a stage, and whether they have passed it. The
// transition-rules controller answers (transition-rules/gate.ts); the lifecycle does not know how.
import type { Pod } from "../../kube/objects.ts";

export type TransitionStageName = "PreCheck" | "PostCheck";

export type TransitionVerdict = { passed: true } | { passed: false; reason: string };

export interface TransitionGate {
  /**
   * The PodTransitionRules with a rule for `stage` that select the pod (by name). None: the
   * stage passes at once, in the same write that begins it.
   */
  rulesFor(pod: Pod, stage: TransitionStageName): string[];
  /** Whether every one of them has checked the pod in this stage and passed it; if not, why. */
  verdict(pod: Pod, stage: TransitionStageName): TransitionVerdict;
}
