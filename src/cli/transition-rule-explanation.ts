// `pod-decorator explain podtransitionrule NAME`: what a PodTransitionRule gates and where each
// pod it selects stands — its PodOpsLifecycle stage, the rules it passed, the one that holds it
// and why, the webhook tasks under way — from the rule's status and the pods, as its controller
// and the lifecycle read them. Pure: explain-cluster.ts reads the cluster.
import { ruleDefinition, ruleStage, type PodTransitionRule, type TransitionRule } from "../api/podtransitionrule.ts";
import type { Pod } from "../kube/objects.ts";
import { transitionStage } from "../controller/lifecycle/pod-ops-lifecycle.ts";
import { recordedVerdict } from "../controller/transition-rules/pod-details.ts";
import { selectorString } from "../controller/transition-rules/rules.ts";
import { transitionRuleSelector } from "../api/podtransitionrule.ts";

export interface TransitionRuleExplanation {
  kind: "PodTransitionRuleExplanation";
  name: string;
  namespace: string;
  selector: string;
  deleting: boolean;
  rules: { name: string; stage: string; check: string; disabled: boolean; detail: string }[];
  pods: { name: string; stage: string; standing: "passed" | "held" | "waiting" | "not-in-a-stage"; passedRules: string[]; reason?: string }[];
  webhookTasks: { rule: string; taskId: string; processing: string[]; approved: string[]; message: string }[];
}

export function explainTransitionRule(transitionRule: PodTransitionRule, pods: readonly Pod[]): TransitionRuleExplanation {
  const { name = "", namespace = "" } = transitionRule.metadata;
  const selector = transitionRuleSelector(transitionRule);
  const details = new Map((transitionRule.status?.details ?? []).map((detail) => [detail.name ?? "", detail]));
  const selected = pods.filter((pod) => selector?.(pod.metadata?.labels ?? {}) === true).sort((a, b) => ((a.metadata?.name ?? "") < (b.metadata?.name ?? "") ? -1 : 1));
  return {
    kind: "PodTransitionRuleExplanation",
    name,
    namespace,
    selector: transitionRule.spec.selector === undefined ? "<none: selects no pod>" : selectorString(transitionRule.spec.selector) || "<everything>",
    deleting: transitionRule.metadata.deletionTimestamp != null,
    rules: (transitionRule.spec.rules ?? []).map((rule) => ({ name: rule.name ?? "", stage: ruleStage(rule), check: ruleDefinition(rule) ?? "none", disabled: rule.disabled === true, detail: ruleDetail(rule) })),
    pods: selected.map((pod) => {
      const podName = pod.metadata?.name ?? "";
      const stage = transitionStage(pod);
      const detail = details.get(podName);
      const verdict = recordedVerdict(pod, name);
      const passedRules = detail?.passedRules ?? [];
      if (stage === undefined) return { name: podName, stage: "-", standing: "not-in-a-stage" as const, passedRules };
      if (verdict === undefined || verdict.stage !== stage) return { name: podName, stage, standing: "waiting" as const, passedRules, reason: "the rule has not checked it in this stage yet" };
      if (verdict.passed) return { name: podName, stage, standing: "passed" as const, passedRules };
      const reject = verdict.rejectInfo?.[0];
      return { name: podName, stage, standing: "held" as const, passedRules, reason: `${reject?.ruleName ?? ""}: ${reject?.reason ?? ""}` };
    }),
    webhookTasks: (transitionRule.status?.ruleStates ?? []).flatMap((state) => (state.webhookStatus?.taskStates ?? []).map((task) => ({
      rule: state.name ?? "",
      taskId: task.taskId ?? "",
      processing: task.processing ?? [],
      approved: task.approved ?? [],
      message: task.message ?? "",
    }))),
  };
}

function ruleDetail(rule: TransitionRule): string {
  if (rule.availablePolicy !== undefined) {
    const { maxUnavailableValue, minAvailableValue } = rule.availablePolicy;
    return [maxUnavailableValue === undefined ? "" : `maxUnavailableValue=${maxUnavailableValue}`, minAvailableValue === undefined ? "" : `minAvailableValue=${minAvailableValue}`].filter((part) => part !== "").join(" ");
  }
  if (rule.labelCheck !== undefined) return `requires ${selectorString(rule.labelCheck.requires ?? {})}`;
  if (rule.webhook !== undefined) return `${rule.webhook.clientConfig.url}${rule.webhook.clientConfig.poll === undefined ? "" : ` (polls ${rule.webhook.clientConfig.poll.url})`}`;
  return "passes every pod";
}

export function formatTransitionRuleReport(report: TransitionRuleExplanation): string {
  const lines = [
    `PodTransitionRule:  ${report.namespace}/${report.name}${report.deleting ? " (being deleted: it gates nothing)" : ""}`,
    `Selector:           ${report.selector}`,
    "Rules:",
    ...(report.rules.length === 0 ? ["  <none>"] : report.rules.map((rule) => `  ${rule.name}  ${rule.check}  ${rule.stage}${rule.disabled ? "  (disabled)" : ""}  ${rule.detail}`)),
    `Pods (${report.pods.length}):`,
    ...(report.pods.length === 0 ? ["  <none>"] : report.pods.map((pod) => {
      const passed = pod.passedRules.length === 0 ? "" : `  passed: ${pod.passedRules.join(", ")}`;
      return `  ${pod.name}  ${pod.stage}  ${pod.standing}${passed}${pod.reason === undefined ? "" : `\n    ${pod.reason}`}`;
    })),
  ];
  if (report.webhookTasks.length > 0) {
    lines.push("Webhook tasks:", ...report.webhookTasks.map((task) => `  ${task.rule}  ${task.taskId}  processing: ${task.processing.join(", ") || "-"}  approved: ${task.approved.join(", ") || "-"}  ${task.message}`));
  }
  return `${lines.join("\n")}\n`;
}
