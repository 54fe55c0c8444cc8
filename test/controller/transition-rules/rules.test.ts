// A PodTransitionRule's verdicts in one stage, as kuperator's processor gives them.
import { describe, expect, it } from "vitest";
import type { PodTransitionRule, TransitionRule } from "../../../src/api/podtransitionrule.ts";
import { checkStage, scaledValue, selectorString, type WebhookCheck } from "../../../src/controller/transition-rules/rules.ts";
import type { Pod } from "../../../src/kube/objects.ts";

function pod(name: string, options: { labels?: Record<string, string>; available?: boolean; owner?: string; skip?: string[] } = {}): Pod {
  return {
    metadata: {
      name,
      namespace: "shop",
      labels: { app: "web", ...options.labels },
      ...(options.skip === undefined ? {} : { annotations: { "podtransitionrule.kusionstack.io/skip-rule-conditions": JSON.stringify({ skipRules: options.skip }) } }),
      ...(options.owner === undefined ? {} : { ownerReferences: [{ apiVersion: "apps.kusionstack.io/v1alpha1", kind: "CollaSet", name: options.owner, uid: `uid-${options.owner}`, controller: true }] }),
    },
    status: { conditions: [{ type: "Ready", status: options.available === false ? "False" : "True" }] },
  };
}

function transitionRule(rules: TransitionRule[], details: { name: string; passedRules: string[] }[] = []): PodTransitionRule {
  return {
    apiVersion: "apps.kusionstack.io/v1alpha1",
    kind: "PodTransitionRule",
    metadata: { name: "ptr", namespace: "shop" },
    spec: { selector: { matchLabels: { app: "web" } }, rules },
    status: { details: details.map((detail) => ({ ...detail, passed: true, stage: "PreCheck" })) },
  };
}

const noWebhook: WebhookCheck = () => {
  throw new Error("no webhook rule here");
};

function check(rule: PodTransitionRule, pods: Pod[], subjects: string[], options: { uncreated?: number; webhook?: WebhookCheck; stage?: string } = {}) {
  const targets = new Map(pods.map((item) => [item.metadata!.name!, item]));
  const result = checkStage({
    transitionRule: rule,
    stage: options.stage ?? "PreCheck",
    targets,
    subjects,
    available: (item) => item.status?.conditions?.[0]?.status === "True",
    uncreatedReplicas: options.uncreated ?? 0,
    webhook: options.webhook ?? noWebhook,
  });
  return Object.fromEntries([...result.details].map(([name, detail]) => [name, detail.passed ? "passed" : `${detail.rejectInfo![0]!.ruleName}: ${detail.rejectInfo![0]!.reason}`]));
}

const maxOne: TransitionRule = { name: "budget", availablePolicy: { maxUnavailableValue: 1 } };

describe("availablePolicy (kuperator's AvailableRuler)", () => {
  it("passes one pod at a time across every pod the rule selects, whatever its owner", () => {
    const pods = [pod("a-0", { owner: "a" }), pod("a-1", { owner: "a" }), pod("b-0", { owner: "b" }), pod("b-1", { owner: "b" })];
    expect(check(transitionRule([maxOne]), pods, ["a-1", "b-0"])).toEqual({
      "a-1": "passed",
      "b-0": "budget: [budget] blocked by max unavailable policy: [max unavailable]=1/4, [current unavailable]=1/4",
    });
  });

  it("counts unavailable pods and those it passed before against the budget; an unavailable pod passes for free", () => {
    const pods = [pod("a"), pod("b", { available: false }), pod("c"), pod("d")];
    expect(check(transitionRule([{ name: "budget", availablePolicy: { maxUnavailableValue: 2 } }], [{ name: "a", passedRules: ["budget"] }]), pods, ["b", "c"])).toEqual({
      b: "passed",
      c: "budget: [budget] blocked by max unavailable policy: [max unavailable]=2/4, [current unavailable]=2/4",
    });
    // A pod it passed before stays passed.
    expect(check(transitionRule([maxOne], [{ name: "a", passedRules: ["budget"] }]), pods, ["a"])).toEqual({ a: "passed" });
  });

  it("rounds a maxUnavailableValue percentage up and a minAvailableValue one down", () => {
    expect(scaledValue("25%", 3, true)).toBe(1);
    expect(scaledValue("25%", 3, false)).toBe(0);
    expect(scaledValue("half", 3, true)).toBeUndefined();
    const pods = [pod("a"), pod("b"), pod("c")];
    expect(check(transitionRule([{ name: "keep", availablePolicy: { minAvailableValue: "67%" } }]), pods, ["a", "b"])).toEqual({
      a: "passed",
      b: "keep: blocked by min available policy: [min available]=2/3, [current keep available]=2/3",
    });
  });

  it("takes the pods a CollaSet has yet to make from the budget (kuperator's considerOwnerReplicas)", () => {
    const pods = [pod("a"), pod("b")];
    expect(check(transitionRule([maxOne]), pods, ["a"], { uncreated: 1 })).toEqual({ a: "budget: [budget] blocked by max unavailable policy: [max unavailable]=1/2, [current unavailable]=0/2" });
  });
});

describe("the rule chain", () => {
  const labelCheck: TransitionRule = { name: "ready", labelCheck: { requires: { matchLabels: { ready: "yes" } } } };

  it("checks availablePolicy, then labelCheck, then the webhook; a rejected pod goes no further", () => {
    const asked: string[][] = [];
    const webhook: WebhookCheck = (_rule, subjects) => {
      asked.push([...subjects]);
      return { passed: new Set(subjects), rejected: new Map() };
    };
    const rule = transitionRule([{ name: "hook", webhook: { clientConfig: { url: "http://x" } } }, labelCheck, { name: "budget", availablePolicy: { maxUnavailableValue: 2 } }]);
    const pods = [pod("a", { labels: { ready: "yes" } }), pod("b"), pod("c", { labels: { ready: "yes" } })];
    expect(check(rule, pods, ["a", "b", "c"], { webhook })).toEqual({
      a: "passed",
      b: "ready: block by label check policy, pod shop/b labels not match ready=yes",
      c: "budget: [budget] blocked by max unavailable policy: [max unavailable]=2/3, [current unavailable]=2/3",
    });
    expect(asked).toEqual([["a"]]);
  });

  it("skips a rule for a pod that asks to (skip-rule-conditions), one outside its filter, and every pod when it has conditions", () => {
    const pods = [pod("a", { skip: ["ready"] }), pod("b", { labels: { tier: "db" } }), pod("c")];
    expect(check(transitionRule([{ ...labelCheck, filter: { labelSelector: { matchLabels: { tier: "db" } } } }]), pods, ["a", "b", "c"])).toEqual({
      a: "passed",
      b: "ready: block by label check policy, pod shop/b labels not match ready=yes",
      c: "passed",
    });
    expect(check(transitionRule([{ ...labelCheck, conditions: ["any"] }]), pods, ["a", "b", "c"])).toEqual({ a: "passed", b: "passed", c: "passed" });
  });

  it("runs only the rules of the stage (PreCheck by default), not disabled ones, and passes every pod with none", () => {
    const pods = [pod("a")];
    expect(check(transitionRule([{ ...labelCheck, stage: "PostCheck" }]), pods, ["a"])).toEqual({ a: "passed" });
    expect(check(transitionRule([{ ...labelCheck, stage: "PostCheck" }]), pods, ["a"], { stage: "PostCheck" })).toEqual({ a: "ready: block by label check policy, pod shop/a labels not match ready=yes" });
    expect(check(transitionRule([{ ...labelCheck, disabled: true }]), pods, ["a"])).toEqual({ a: "passed" });
  });

  it("prints selectors as apimachinery does", () => {
    expect(selectorString({ matchLabels: { b: "2", a: "1" }, matchExpressions: [{ key: "c", operator: "NotIn", values: ["y", "x"] }, { key: "d", operator: "DoesNotExist" }] })).toBe("a=1,b=2,c notin (x,y),!d");
  });
});
