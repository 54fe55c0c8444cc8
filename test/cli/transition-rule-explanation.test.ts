// `explain ptr NAME`: where each pod a PodTransitionRule selects stands, from its status and the
// verdicts on the pods.
import { describe, expect, it } from "vitest";
import type { PodTransitionRule } from "../../src/api/podtransitionrule.ts";
import { explainTransitionRule, formatTransitionRuleReport } from "../../src/cli/transition-rule-explanation.ts";
import type { Pod } from "../../src/kube/objects.ts";

const rule: PodTransitionRule = {
  apiVersion: "apps.kusionstack.io/v1alpha1",
  kind: "PodTransitionRule",
  metadata: { name: "gate", namespace: "shop" },
  spec: { selector: { matchLabels: { app: "web" } }, rules: [{ name: "one", availablePolicy: { maxUnavailableValue: 1 } }, { name: "ask", stage: "PostCheck", disabled: true, webhook: { clientConfig: { url: "https://checker/check" } } }] },
  status: {
    targets: ["a", "b", "c"],
    details: [{ name: "a", stage: "PreCheck", passed: true, passedRules: ["one"] }],
    ruleStates: [{ name: "ask", webhookStatus: { taskStates: [{ taskId: "t-1", processing: ["c"], approved: [], message: "busy" }] } }],
  },
};

function pod(name: string, labels: Record<string, string>, verdict?: string): Pod {
  return { metadata: { name, namespace: "shop", labels: { app: "web", ...labels }, ...(verdict === undefined ? {} : { annotations: { "detail.podtransitionrule.kusionstack.io/gate": verdict } }) } };
}

describe("explainTransitionRule", () => {
  it("tells each selected pod's stage and standing, with the reason that holds it", () => {
    const preCheck = { "pre-check.podopslifecycle.kusionstack.io/collaset": "1" };
    const report = explainTransitionRule(rule, [
      pod("a", preCheck, '{"stage":"PreCheck","passed":true}'),
      pod("b", preCheck, '{"stage":"PreCheck","passed":false,"rejectInfo":[{"ruleName":"one","reason":"blocked by max unavailable policy"}]}'),
      pod("c", preCheck, '{"stage":"Unknown","passed":true}'),
      pod("d", {}),
      pod("other", { app: "db" }),
    ]);
    expect(report.pods).toEqual([
      { name: "a", stage: "PreCheck", standing: "passed", passedRules: ["one"] },
      { name: "b", stage: "PreCheck", standing: "held", passedRules: [], reason: "one: blocked by max unavailable policy" },
      { name: "c", stage: "PreCheck", standing: "waiting", passedRules: [], reason: "the rule has not checked it in this stage yet" },
      { name: "d", stage: "-", standing: "not-in-a-stage", passedRules: [] },
    ]);
    expect(report.rules).toEqual([
      { name: "one", stage: "PreCheck", check: "availablePolicy", disabled: false, detail: "maxUnavailableValue=1" },
      { name: "ask", stage: "PostCheck", check: "webhook", disabled: true, detail: "https://checker/check" },
    ]);
    const text = formatTransitionRuleReport(report);
    expect(text).toContain("PodTransitionRule:  shop/gate\nSelector:           app=web\n");
    expect(text).toContain("  b  PreCheck  held\n    one: blocked by max unavailable policy\n");
    expect(text).toContain("Webhook tasks:\n  ask  t-1  processing: c  approved: -  busy\n");
  });
});
