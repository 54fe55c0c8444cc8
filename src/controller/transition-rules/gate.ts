// PodTransitionRules as PodOpsLifecycle's gate (lifecycle/transition-gate.ts), kuperator's
// checker: a pod may go on from a stage once every PodTransitionRule that selects it, and has a
// rule for that stage, has checked it in that stage and passed it — as the verdict the rule wrote
// on the pod says (pod-details.ts), so the pod's own change tells its owner to look again. A rule
// being deleted, or with no rule for the stage, gates nothing (kuperator's would pass it at once).
import type { PodTransitionRule } from "../../api/podtransitionrule.ts";
import { transitionRuleSelector } from "../../api/podtransitionrule.ts";
import type { KubeObject, Pod } from "../../kube/objects.ts";
import type { TransitionGate, TransitionStageName, TransitionVerdict } from "../lifecycle/transition-gate.ts";
import type { Lister } from "../runtime/cache.ts";
import { recordedVerdict } from "./pod-details.ts";
import { stageRules } from "./rules.ts";

export type CachedTransitionRule = PodTransitionRule & KubeObject;

export function transitionGate(transitionRules: Pick<Lister<CachedTransitionRule>, "list">): TransitionGate {
  const gating = (pod: Pod, stage: TransitionStageName): CachedTransitionRule[] =>
    transitionRules.list(pod.metadata?.namespace ?? "").filter((transitionRule) =>
      transitionRule.metadata.deletionTimestamp == null
      && stageRules(transitionRule, stage).length > 0
      && transitionRuleSelector(transitionRule)?.(pod.metadata?.labels ?? {}) === true);
  return {
    rulesFor: (pod, stage) => gating(pod, stage).map((transitionRule) => transitionRule.metadata.name ?? "").sort(),
    verdict(pod, stage): TransitionVerdict {
      const reasons: string[] = [];
      for (const transitionRule of gating(pod, stage).sort((a, b) => ((a.metadata.name ?? "") < (b.metadata.name ?? "") ? -1 : 1))) {
        const name = transitionRule.metadata.name ?? "";
        const verdict = recordedVerdict(pod, name);
        if (verdict === undefined || verdict.stage !== stage) reasons.push(`waiting for PodTransitionRule ${name} to check it in stage ${stage}`);
        else if (!verdict.passed) reasons.push(`PodTransitionRule ${name}: ${(verdict.rejectInfo ?? []).map((reject) => `${reject.ruleName ?? ""}: ${reject.reason ?? ""}`).join("; ") || "not passed"}`);
      }
      return reasons.length === 0 ? { passed: true } : { passed: false, reason: reasons.join("; ") };
    },
  };
}
