// PodTransitionRule: kuperator's schema, its defaults and its validation with field paths.
import { describe, expect, it } from "vitest";
import { defaultPodTransitionRule, podTransitionRuleWarnings, validatePodTransitionRule, type PodTransitionRule } from "../../src/api/podtransitionrule.ts";
import { formatFieldErrors } from "../../src/api/field-errors.ts";

const CA = Buffer.from("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n").toString("base64");

/** kuperator's own example (its e2e case and manual): an availability budget and a webhook. */
function transitionRule(change: (rule: PodTransitionRule) => void = () => undefined): PodTransitionRule {
  const rule: PodTransitionRule = {
    apiVersion: "apps.kusionstack.io/v1alpha1",
    kind: "PodTransitionRule",
    metadata: { name: "web", namespace: "shop" },
    spec: {
      selector: { matchLabels: { app: "web" } },
      rules: [
        { name: "serviceAvailable", availablePolicy: { maxUnavailableValue: "50%" } },
        { name: "webhookCheck", stage: "PreCheck", webhook: { clientConfig: { url: "https://checker.shop:8443/check", caBundle: CA, poll: { url: "https://checker.shop:8443/poll" } }, parameters: [{ key: "podIP", valueFrom: { fieldRef: { fieldPath: "status.podIP" } } }] } },
        { name: "labelCheck", labelCheck: { requires: { matchLabels: { ready: "yes" } } } },
      ],
    },
  };
  change(rule);
  return rule;
}

const messages = (rule: PodTransitionRule) => formatFieldErrors("PodTransitionRule", "web", validatePodTransitionRule(rule));

describe("PodTransitionRule validation", () => {
  it("accepts kuperator's manifests, including one without rules", () => {
    expect(messages(transitionRule())).toEqual([]);
    expect(messages(transitionRule((rule) => delete rule.spec.rules))).toEqual([]);
  });

  it("refuses what kuperator's webhook refuses, with field paths", () => {
    expect(messages(transitionRule((rule) => delete rule.spec.selector))).toEqual(["PodTransitionRule/web: spec.selector: Required value"]);
    expect(messages(transitionRule((rule) => delete rule.spec.rules![0]!.name))).toEqual(["PodTransitionRule/web: spec.rules[0].name: Required value"]);
    expect(messages(transitionRule((rule) => {
      rule.spec.rules![0]!.availablePolicy = {};
    }))).toEqual([`PodTransitionRule/web: spec.rules[0].availablePolicy: Invalid value: {}: minAvailableValue and maxUnavailableValue must have at least one configured`]);
    expect(messages(transitionRule((rule) => {
      rule.spec.rules![2]!.labelCheck = {};
    }))).toEqual(["PodTransitionRule/web: spec.rules[2].labelCheck.requires: Required value: nil label check required"]);
    expect(messages(transitionRule((rule) => {
      rule.spec.rules![1]!.webhook!.clientConfig.caBundle = Buffer.from("not a certificate").toString("base64");
    }))).toEqual(["PodTransitionRule/web: spec.rules[1].webhook.clientConfig.caBundle: Invalid value: \"<caBundle>\": must be base64 of a PEM certificate"]);
  });

  it("refuses what could never work, each problem at once", () => {
    const errors = messages(transitionRule((rule) => {
      rule.spec.selector = { matchExpressions: [{ key: "app", operator: "In" }] };
      rule.spec.rules![0]!.availablePolicy = { maxUnavailableValue: "half", minAvailableValue: -1 };
      rule.spec.rules![1]!.webhook!.clientConfig.url = "checker:8443";
      rule.spec.rules![1]!.webhook!.clientConfig.poll!.intervalSeconds = 0;
      rule.spec.rules![1]!.webhook!.parameters = [{ key: "x" }];
      rule.spec.rules![2]!.name = "serviceAvailable";
    }));
    expect(errors).toEqual([
      "PodTransitionRule/web: spec.selector.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'",
      "PodTransitionRule/web: spec.rules[0].availablePolicy.maxUnavailableValue: Invalid value: \"half\": a string must be a percentage like '25%'",
      "PodTransitionRule/web: spec.rules[0].availablePolicy.minAvailableValue: Invalid value: -1: must be greater than or equal to 0",
      "PodTransitionRule/web: spec.rules[1].webhook.clientConfig.url: Invalid value: \"checker:8443\": must be an absolute http or https URL",
      "PodTransitionRule/web: spec.rules[1].webhook.clientConfig.poll.intervalSeconds: Invalid value: 0: must be at least 1",
      "PodTransitionRule/web: spec.rules[1].webhook.parameters[0].valueFrom.fieldRef.fieldPath: Required value: a parameter needs a value or a field of the pod",
      "PodTransitionRule/web: spec.rules[2].name: Duplicate value: \"serviceAvailable\"",
    ]);
  });
});

describe("PodTransitionRule defaulting and warnings", () => {
  it("writes kuperator's poll interval and timeout, and leaves its input alone", () => {
    const input = transitionRule();
    const before = structuredClone(input);
    const defaulted = defaultPodTransitionRule(input);
    expect(input).toEqual(before);
    expect(defaulted.spec.rules![1]!.webhook!.clientConfig.poll).toMatchObject({ intervalSeconds: 5, timeoutSeconds: 60 });
    expect(defaultPodTransitionRule(defaulted)).toEqual(defaulted);
  });

  it("names each field accepted and not acted on, as in kuperator", () => {
    const warnings = podTransitionRuleWarnings(transitionRule((rule) => {
      rule.spec.rules![0]!.availablePolicy!.maxUnavailablePolicy = { expFunc: { coeff: "1", pow: "0.5" } };
      rule.spec.rules![0]!.labelCheck = { requires: {} };
      rule.spec.rules![1]!.webhook!.failurePolicy = "Ignore";
      rule.spec.rules![2]!.stage = "Later";
      rule.spec.rules![2]!.conditions = ["a"];
      rule.spec.rules!.push({ name: "nothing" });
    }));
    expect(warnings).toEqual([
      "spec.rules[0]: defines availablePolicy and labelCheck: as in kuperator, only availablePolicy is checked.",
      "spec.rules[0].availablePolicy: maxUnavailablePolicy and minAvailablePolicy are accepted so kuperator manifests apply, but not acted on, as in kuperator: the values are.",
      expect.stringMatching(/^spec\.rules\[1\]\.webhook\.failurePolicy: .*holds the pods/),
      "spec.rules[2].stage: \"Later\" is no PodOpsLifecycle stage (PreCheck, PostCheck): the rule never runs.",
      "spec.rules[2].conditions: no operation condition is defined, as in kuperator: the rule skips every pod.",
      "spec.rules[3]: defines no check (availablePolicy, labelCheck or webhook): as in kuperator, it passes every pod.",
    ]);
  });
});
