// One PodTransitionRule's verdicts on the pods in one PodOpsLifecycle stage, as kuperator's
// rule processor gives them (pkg/controllers/podtransitionrule/processor): the rules of the
// stage that are not disabled, availablePolicy first, then labelCheck, then webhook; each rule
// checks the pods the rules before it passed (and those they skipped); a pod a rule rejects
// goes no further and is not passed. Pure: the webhook's answers come from webhook-calls.ts.
import { parseLabelSelector, type LabelSelector } from "../../api/label-selector.ts";
import { ruleDefinition, ruleStage, type PodTransitionDetail, type PodTransitionRule, type RuleState, type TransitionRule } from "../../api/podtransitionrule.ts";
import type { Pod } from "../../kube/objects.ts";
import { skippedRules } from "./pod-details.ts";

/** What a rule decides about the pods it checks. */
export interface RuleResult {
  passed: Set<string>;
  /** Pod name → why. */
  rejected: Map<string, string>;
  /** Check again after this long (a webhook asked again, a poll). */
  retryInMs?: number;
  /** A webhook rule's record of its calls, for status.ruleStates. */
  ruleState?: RuleState;
}

/** A webhook rule's check of `subjects` (webhook-calls.ts); `approved`: pods it passed before, in this stage. */
export type WebhookCheck = (rule: TransitionRule, subjects: readonly string[], approved: (pod: string) => boolean) => RuleResult;

export interface StageInput {
  transitionRule: PodTransitionRule;
  stage: string;
  /** Every pod the rule selects, by name. */
  targets: ReadonlyMap<string, Pod>;
  /** The selected pods in this stage. */
  subjects: readonly string[];
  /** Whether a pod serves (pod-availability.ts): an unavailable pod takes no budget to pass. */
  available: (pod: Pod) => boolean;
  /** Pods the selected pods' CollaSets want but have not made yet (kuperator's considerOwnerReplicas). */
  uncreatedReplicas: number;
  webhook: WebhookCheck;
}

export interface StageResult {
  /** Pod name → its detail, for every subject. */
  details: Map<string, PodTransitionDetail>;
  ruleStates: RuleState[];
  retryInMs?: number;
}

const WEIGHT: Record<string, number> = { availablePolicy: 1, labelCheck: 3, webhook: 5 };

/** The rules that gate `stage`, in the order they check (kuperator's utils.Rules sort, kept stable). */
export function stageRules(transitionRule: PodTransitionRule, stage: string): TransitionRule[] {
  return (transitionRule.spec.rules ?? [])
    .filter((rule) => rule.disabled !== true && ruleStage(rule) === stage)
    .map((rule, index) => ({ rule, index, weight: WEIGHT[ruleDefinition(rule) ?? ""] ?? 100 }))
    .sort((a, b) => a.weight - b.weight || a.index - b.index)
    .map(({ rule }) => rule);
}

export function checkStage(input: StageInput): StageResult {
  const { transitionRule, stage, targets } = input;
  const passedRules = new Map(input.subjects.map((pod) => [pod, new Set<string>()]));
  const rejected = new Map<string, { ruleName: string; reason: string }>();
  const ruleStates: RuleState[] = [];
  const retries: number[] = [];
  let processing = [...input.subjects];
  for (const rule of stageRules(transitionRule, stage)) {
    const name = rule.name ?? "";
    const skipped = new Set<string>();
    const filter = rule.filter?.labelSelector === undefined ? undefined : matcher(rule.filter.labelSelector);
    for (const pod of processing) {
      const object = targets.get(pod)!;
      if (skippedRules(object).has(name)) skipped.add(pod);
      // No operation condition is defined (kuperator registers none): a rule with conditions skips every pod.
      else if ((rule.conditions ?? []).length > 0) skipped.add(pod);
      else if (filter !== undefined && !filter(object.metadata?.labels ?? {})) skipped.add(pod);
    }
    const checked = processing.filter((pod) => !skipped.has(pod));
    const result = checkRule(input, rule, checked);
    if (result.ruleState !== undefined) ruleStates.push(result.ruleState);
    if (result.retryInMs !== undefined) retries.push(result.retryInMs);
    for (const pod of result.passed) passedRules.get(pod)?.add(name);
    for (const [pod, reason] of result.rejected) rejected.set(pod, { ruleName: name, reason });
    processing = [...input.subjects].filter((pod) => result.passed.has(pod) || skipped.has(pod));
  }
  const details = new Map<string, PodTransitionDetail>();
  for (const pod of input.subjects) {
    const reject = rejected.get(pod);
    const rules = [...passedRules.get(pod)!].sort();
    details.set(pod, {
      name: pod,
      stage,
      passed: reject === undefined,
      ...(rules.length === 0 ? {} : { passedRules: rules }),
      ...(reject === undefined ? {} : { rejectInfo: [reject] }),
    });
  }
  return { details, ruleStates, ...(retries.length === 0 ? {} : { retryInMs: Math.min(...retries) }) };
}

function checkRule(input: StageInput, rule: TransitionRule, subjects: readonly string[]): RuleResult {
  const name = rule.name ?? "";
  const approved = (pod: string) => passedBefore(input.transitionRule, pod, name);
  switch (ruleDefinition(rule)) {
    case "availablePolicy":
      return availableRule(input, rule, subjects, approved);
    case "labelCheck":
      return labelCheckRule(input, rule.labelCheck!.requires ?? {}, subjects);
    case "webhook":
      return input.webhook(rule, subjects, approved);
    case undefined:
      // No check defined: kuperator has no ruler for it and lets every pod through.
      return { passed: new Set(subjects), rejected: new Map() };
  }
}

/** The pod passed this rule in the status the rule wrote last (kuperator's IsPodPassRule). */
export function passedBefore(transitionRule: PodTransitionRule, pod: string, ruleName: string): boolean {
  return (transitionRule.status?.details ?? []).some((detail) => detail.name === pod && (detail.passedRules ?? []).includes(ruleName));
}

/**
 * kuperator's AvailableRuler: of every pod the rule selects (whatever its owner), those that
 * passed the rule before or are unavailable take from the budget (maxUnavailableValue, less the
 * pods their CollaSets have yet to make); a pod that is unavailable anyway passes for free; an
 * available one passes while budget is left and minAvailableValue pods would still serve.
 */
function availableRule(input: StageInput, rule: TransitionRule, subjects: readonly string[], approved: (pod: string) => boolean): RuleResult {
  const policy = rule.availablePolicy!;
  const name = rule.name ?? "";
  const total = input.targets.size;
  const passed = new Set<string>();
  const rejected = new Map<string, string>();
  const maxQuota = policy.maxUnavailableValue === undefined ? total : scaledValue(policy.maxUnavailableValue, total, true);
  const minQuota = policy.minAvailableValue === undefined ? 0 : scaledValue(policy.minAvailableValue, total, false);
  if (maxQuota === undefined || minQuota === undefined) {
    for (const pod of subjects) rejected.set(pod, `[${name}] fail to get int value from raw max unavailable value(${String(policy.maxUnavailableValue ?? policy.minAvailableValue)})`);
    return { passed, rejected };
  }
  let allowUnavailable = Math.max(0, maxQuota - input.uncreatedReplicas);
  let availableCount = 0;
  for (const [podName, pod] of input.targets) {
    if (approved(podName) || !input.available(pod)) allowUnavailable--;
    else availableCount++;
  }
  const keepMin: string[] = [];
  const overMax: string[] = [];
  for (const podName of subjects) {
    const pod = input.targets.get(podName)!;
    if (approved(podName) || !input.available(pod)) {
      passed.add(podName);
    } else if (allowUnavailable > 0) {
      if (availableCount - minQuota < 1) keepMin.push(podName);
      else {
        availableCount--;
        allowUnavailable--;
        passed.add(podName);
      }
    } else overMax.push(podName);
  }
  for (const pod of keepMin) rejected.set(pod, `blocked by min available policy: [min available]=${minQuota}/${total}, [current keep available]=${availableCount}/${total}`);
  for (const pod of overMax) rejected.set(pod, `[${name}] blocked by max unavailable policy: [max unavailable]=${maxQuota}/${total}, [current unavailable]=${total - availableCount}/${total}`);
  return { passed, rejected };
}

/** apimachinery's GetScaledValueFromIntOrPercent: a count, or a percentage of `total` rounded up or down. */
export function scaledValue(value: number | string, total: number, roundUp: boolean): number | undefined {
  if (typeof value === "number") return value;
  const match = /^(\d+)%$/.exec(value);
  if (match === null) return undefined;
  const scaled = (Number(match[1]) * total) / 100;
  return roundUp ? Math.ceil(scaled) : Math.floor(scaled);
}

function labelCheckRule(input: StageInput, requires: LabelSelector, subjects: readonly string[]): RuleResult {
  const passed = new Set<string>();
  const rejected = new Map<string, string>();
  const matches = matcher(requires);
  for (const podName of subjects) {
    const pod = input.targets.get(podName)!;
    if (matches?.(pod.metadata?.labels ?? {}) === true) passed.add(podName);
    else rejected.set(podName, matches === undefined ? "labelCheck error: invalid selector" : `block by label check policy, pod ${pod.metadata?.namespace ?? ""}/${podName} labels not match ${selectorString(requires)}`);
  }
  return { passed, rejected };
}

function matcher(selector: LabelSelector): ((labels: Readonly<Record<string, string>>) => boolean) | undefined {
  const parsed = parseLabelSelector(selector);
  return parsed.ok ? parsed.matches : undefined;
}

/** A selector as apimachinery prints one: requirements by key, `k=v`, `k in (a,b)`, `k notin (a,b)`, `k`, `!k`. */
export function selectorString(selector: LabelSelector): string {
  const requirements = [
    ...Object.entries(selector.matchLabels ?? {}).map(([key, value]) => ({ key, text: `${key}=${value}` })),
    ...(selector.matchExpressions ?? []).map((requirement) => {
      const values = [...(requirement.values ?? [])].sort().join(",");
      switch (requirement.operator) {
        case "In":
          return { key: requirement.key, text: `${requirement.key} in (${values})` };
        case "NotIn":
          return { key: requirement.key, text: `${requirement.key} notin (${values})` };
        case "Exists":
          return { key: requirement.key, text: requirement.key };
        case "DoesNotExist":
          return { key: requirement.key, text: `!${requirement.key}` };
      }
    }),
  ];
  return requirements.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0)).map((requirement) => requirement.text).join(",");
}
