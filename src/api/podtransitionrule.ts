// PodTransitionRule (apps.kusionstack.io/v1alpha1, kube-api's podtransitionrule_types.go): rules
// over the pods a selector picks that gate their PodOpsLifecycle stages (PreCheck, PostCheck) —
// an availability budget across every pod the rule selects, a label check, an HTTP webhook. The
// schema is kuperator's, field for field, so its manifests apply unchanged; like the other kinds
// here it is the type, the CRD schema and the validator (DESIGN §1).
//
// Exports: PodTransitionRule, TransitionRule (types); defaultPodTransitionRule (pure);
// validatePodTransitionRule(value): FieldError[]; podTransitionRuleWarnings; the stage names.
import Type, { type Static } from "typebox";
import { Value } from "typebox/value";
import { childPath, duplicateError, type FieldError, indexPath, invalidError, notSupportedError, requiredError } from "./field-errors.ts";
import { PODTRANSITIONRULE_KIND } from "./group.ts";
import { kindObjectSchema, kindValidator } from "./kind-envelope.ts";
import { LabelSelectorSchema, parseLabelSelector } from "./label-selector.ts";
import { withoutNullFields } from "./null-fields.ts";
import { IntOrString, OpenObject } from "./openapi.ts";

export const PODTRANSITIONRULE_PLURAL = "podtransitionrules";

/** kube-api's PodOpsLifecyclePreCheckStage and PodOpsLifecyclePostCheckStage. */
export const PRE_CHECK_STAGE = "PreCheck";
export const POST_CHECK_STAGE = "PostCheck";
export const TRANSITION_STAGES = [PRE_CHECK_STAGE, POST_CHECK_STAGE] as const;
export type TransitionStage = (typeof TRANSITION_STAGES)[number];

/** kube-api's DefaultWebhookInterval and DefaultWebhookTimeout (seconds), which kuperator's webhook writes into `poll`. */
export const DEFAULT_POLL_INTERVAL_SECONDS = 5;
export const DEFAULT_POLL_TIMEOUT_SECONDS = 60;

const ExpFuncSchema = Type.Object({ coeff: Type.Optional(Type.String()), pow: Type.Optional(Type.String()) });
const AdaptivePolicySchema = Type.Object({ expFunc: Type.Optional(ExpFuncSchema) });

export const AvailableRuleSchema = Type.Object({
  maxUnavailableValue: Type.Optional(IntOrString({ description: "The most pods the rule selects that may be unavailable at once: a count or a percentage of them (rounded up)." })),
  maxUnavailablePolicy: Type.Optional(AdaptivePolicySchema),
  minAvailableValue: Type.Optional(IntOrString({ description: "The fewest pods the rule selects that must stay available: a count or a percentage of them (rounded down)." })),
  minAvailablePolicy: Type.Optional(AdaptivePolicySchema),
});

const PollSchema = Type.Object({
  url: Type.String({ description: "Where a task is polled: URL?task-id=<id> (or the rawQueryKey)." }),
  rawQueryKey: Type.Optional(Type.String()),
  caBundle: Type.Optional(Type.String({ description: "Base64 of the PEM CA bundle the poll URL's certificate is checked against." })),
  intervalSeconds: Type.Optional(Type.Integer({ default: DEFAULT_POLL_INTERVAL_SECONDS })),
  timeoutSeconds: Type.Optional(Type.Integer({ default: DEFAULT_POLL_TIMEOUT_SECONDS })),
});

const ParameterSchema = Type.Object({
  key: Type.Optional(Type.String()),
  value: Type.Optional(Type.String()),
  valueFrom: Type.Optional(Type.Object({
    type: Type.Optional(Type.String()),
    fieldRef: Type.Optional(OpenObject({ description: "An ObjectFieldSelector: fieldPath is read from the pod." })),
  })),
});

export const TransitionRuleWebhookSchema = Type.Object({
  clientConfig: Type.Object({
    url: Type.String({ description: "The http or https URL the check is POSTed to." }),
    caBundle: Type.Optional(Type.String({ description: "Base64 of the PEM CA bundle the URL's certificate is checked against." })),
    poll: Type.Optional(PollSchema),
  }),
  failurePolicy: Type.Optional(Type.String()),
  parameters: Type.Optional(Type.Array(ParameterSchema)),
});

export const TransitionRuleSchema = Type.Object({
  name: Type.Optional(Type.String()),
  disabled: Type.Optional(Type.Boolean()),
  stage: Type.Optional(Type.String({ description: "PreCheck (default) or PostCheck: the PodOpsLifecycle stage the rule gates." })),
  conditions: Type.Optional(Type.Array(Type.String())),
  filter: Type.Optional(Type.Object({ labelSelector: Type.Optional(LabelSelectorSchema) })),
  availablePolicy: Type.Optional(AvailableRuleSchema),
  labelCheck: Type.Optional(Type.Object({ requires: Type.Optional(LabelSelectorSchema) })),
  webhook: Type.Optional(TransitionRuleWebhookSchema),
});
export type TransitionRule = Static<typeof TransitionRuleSchema>;

export const PodTransitionRuleSpecSchema = Type.Object({
  selector: Type.Optional(LabelSelectorSchema),
  rules: Type.Optional(Type.Array(TransitionRuleSchema)),
});
export type PodTransitionRuleSpec = Static<typeof PodTransitionRuleSpecSchema>;

const TaskInfoSchema = Type.Object({
  taskId: Type.Optional(Type.String()),
  processing: Type.Optional(Type.Array(Type.String())),
  approved: Type.Optional(Type.Array(Type.String())),
  beginTime: Type.Optional(Type.String({ format: "date-time" })),
  lastTime: Type.Optional(Type.String({ format: "date-time" })),
  message: Type.Optional(Type.String()),
});
export type TaskInfo = Static<typeof TaskInfoSchema>;

export const RuleStateSchema = Type.Object({
  name: Type.Optional(Type.String()),
  webhookStatus: Type.Optional(Type.Object({
    taskStates: Type.Optional(Type.Array(TaskInfoSchema)),
    history: Type.Optional(Type.Array(TaskInfoSchema)),
  })),
});
export type RuleState = Static<typeof RuleStateSchema>;

export const PodTransitionDetailSchema = Type.Object({
  name: Type.Optional(Type.String()),
  stage: Type.Optional(Type.String()),
  passed: Type.Boolean(),
  passedRules: Type.Optional(Type.Array(Type.String())),
  rejectInfo: Type.Optional(Type.Array(Type.Object({ ruleName: Type.Optional(Type.String()), reason: Type.Optional(Type.String()) }))),
});
export type PodTransitionDetail = Static<typeof PodTransitionDetailSchema>;

export const PodTransitionRuleStatusSchema = Type.Object({
  updateTime: Type.Optional(Type.String({ format: "date-time" })),
  observedGeneration: Type.Optional(Type.Integer()),
  targets: Type.Optional(Type.Array(Type.String(), { description: "The pods the selector picks." })),
  ruleStates: Type.Optional(Type.Array(RuleStateSchema)),
  details: Type.Optional(Type.Array(PodTransitionDetailSchema, { description: "Each pod in a stage: whether it passed, the rules it passed, the one that rejected it." })),
});
export type PodTransitionRuleStatus = Static<typeof PodTransitionRuleStatusSchema>;

export const PodTransitionRuleSchema = kindObjectSchema(PodTransitionRuleSpecSchema, PodTransitionRuleStatusSchema);
export type PodTransitionRule = Static<typeof PodTransitionRuleSchema>;

/** The definition a rule carries, in the order kuperator's GetRuler picks one when several are set. */
export type RuleDefinition = "availablePolicy" | "labelCheck" | "webhook";
const DEFINITIONS: readonly RuleDefinition[] = ["availablePolicy", "labelCheck", "webhook"];

export function ruleDefinition(rule: TransitionRule): RuleDefinition | undefined {
  return DEFINITIONS.find((definition) => rule[definition] !== undefined);
}

/** The stage a rule gates: its own, else PreCheck (kuperator's first registered stage). */
export function ruleStage(rule: TransitionRule): string {
  return rule.stage ?? PRE_CHECK_STAGE;
}

/** Fills in kuperator's defaults (a webhook's poll interval and timeout); null fields read as absent. */
export function defaultPodTransitionRule(rule: PodTransitionRule): PodTransitionRule {
  return Value.Default(PodTransitionRuleSchema, withoutNullFields(rule)) as PodTransitionRule;
}

const validator = kindValidator({ kind: PODTRANSITIONRULE_KIND, specSchema: PodTransitionRuleSpecSchema, validateSpec });

/** Structural validation (before or after defaulting), null fields read as absent; status is not validated. */
export function validatePodTransitionRule(value: unknown): FieldError[] {
  return validator(value);
}

function validateSpec(spec: PodTransitionRuleSpec): FieldError[] {
  const errors: FieldError[] = [];
  // kuperator refuses a rule without a selector ("podtransitionrule selector cannot be nil").
  if (spec.selector === undefined) errors.push(requiredError("spec.selector"));
  else {
    const selector = parseLabelSelector(spec.selector, "spec.selector");
    if (!selector.ok) errors.push(...selector.errors);
  }
  const names = new Set<string>();
  (spec.rules ?? []).forEach((rule, index) => {
    const path = indexPath("spec.rules", index);
    if ((rule.name ?? "") === "") errors.push(requiredError(childPath(path, "name")));
    // A rule's name keys its verdicts on every pod (status.details[].passedRules): two of one name could not be told apart.
    else if (names.has(rule.name!)) errors.push(duplicateError(childPath(path, "name"), rule.name));
    else names.add(rule.name!);
    if (rule.filter?.labelSelector !== undefined) {
      const filter = parseLabelSelector(rule.filter.labelSelector, childPath(path, "filter.labelSelector"));
      if (!filter.ok) errors.push(...filter.errors);
    }
    const available = rule.availablePolicy;
    if (available !== undefined) {
      if (available.maxUnavailableValue === undefined && available.minAvailableValue === undefined) {
        errors.push(invalidError(childPath(path, "availablePolicy"), available, "minAvailableValue and maxUnavailableValue must have at least one configured"));
      }
      for (const field of ["maxUnavailableValue", "minAvailableValue"] as const) {
        const value = available[field];
        if (value !== undefined) errors.push(...validateCountOrPercent(value, childPath(path, `availablePolicy.${field}`)));
      }
    }
    if (rule.labelCheck !== undefined) {
      if (rule.labelCheck.requires === undefined) errors.push(requiredError(childPath(path, "labelCheck.requires"), "nil label check required"));
      else {
        const requires = parseLabelSelector(rule.labelCheck.requires, childPath(path, "labelCheck.requires"));
        if (!requires.ok) errors.push(...requires.errors);
      }
    }
    if (rule.webhook !== undefined) errors.push(...validateWebhook(rule.webhook, childPath(path, "webhook")));
  });
  return errors;
}

function validateCountOrPercent(value: number | string, path: string): FieldError[] {
  if (typeof value === "number") return value >= 0 ? [] : [invalidError(path, value, "must be greater than or equal to 0")];
  return /^\d+%$/.test(value) ? [] : [invalidError(path, value, "a string must be a percentage like '25%'")];
}

function validateWebhook(webhook: Static<typeof TransitionRuleWebhookSchema>, path: string): FieldError[] {
  const errors: FieldError[] = [];
  errors.push(...validateUrl(webhook.clientConfig.url, childPath(path, "clientConfig.url")));
  errors.push(...validateCaBundle(webhook.clientConfig.caBundle, childPath(path, "clientConfig.caBundle")));
  const poll = webhook.clientConfig.poll;
  if (poll !== undefined) {
    errors.push(...validateUrl(poll.url, childPath(path, "clientConfig.poll.url")));
    errors.push(...validateCaBundle(poll.caBundle, childPath(path, "clientConfig.poll.caBundle")));
    for (const field of ["intervalSeconds", "timeoutSeconds"] as const) {
      const value = poll[field];
      if (value !== undefined && value < 1) errors.push(invalidError(childPath(path, `clientConfig.poll.${field}`), value, "must be at least 1"));
    }
  }
  if (webhook.failurePolicy !== undefined && !["Ignore", "Fail"].includes(webhook.failurePolicy)) {
    errors.push(notSupportedError(childPath(path, "failurePolicy"), webhook.failurePolicy, ["Ignore", "Fail"]));
  }
  (webhook.parameters ?? []).forEach((parameter, index) => {
    const parameterPath = indexPath(childPath(path, "parameters"), index);
    if ((parameter.key ?? "") === "") errors.push(requiredError(childPath(parameterPath, "key")));
    const fieldPath = (parameter.valueFrom?.fieldRef as { fieldPath?: unknown } | undefined)?.fieldPath;
    if ((parameter.value ?? "") === "" && (typeof fieldPath !== "string" || fieldPath === "")) {
      errors.push(requiredError(childPath(parameterPath, "valueFrom.fieldRef.fieldPath"), "a parameter needs a value or a field of the pod"));
    }
  });
  return errors;
}

function validateUrl(url: string, path: string): FieldError[] {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return [invalidError(path, url, "must be an absolute http or https URL")];
  }
  return parsed.protocol === "http:" || parsed.protocol === "https:" ? [] : [invalidError(path, url, "must be an absolute http or https URL")];
}

/** kuperator's CheckCaBundle: empty (or "Cg==", a base64 newline), else base64 of a PEM certificate. */
function validateCaBundle(caBundle: string | undefined, path: string): FieldError[] {
  if (caBundle === undefined || caBundle === "" || caBundle === "Cg==") return [];
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(caBundle.replace(/\s/g, ""))) return [invalidError(path, "<caBundle>", "must be base64")];
  const pem = Buffer.from(caBundle, "base64").toString("utf8");
  return /-----BEGIN CERTIFICATE-----[\s\S]+-----END CERTIFICATE-----/.test(pem) ? [] : [invalidError(path, "<caBundle>", "must be base64 of a PEM certificate")];
}

/** Warnings about a valid PodTransitionRule: each field kuperator accepts and does not act on either. */
export function podTransitionRuleWarnings(rule: PodTransitionRule): string[] {
  const { spec } = withoutNullFields(rule);
  const warnings: string[] = [];
  (spec.rules ?? []).forEach((item, index) => {
    const path = indexPath("spec.rules", index);
    const set = DEFINITIONS.filter((definition) => item[definition] !== undefined);
    if (set.length === 0) warnings.push(`${path}: defines no check (availablePolicy, labelCheck or webhook): as in kuperator, it passes every pod.`);
    if (set.length > 1) warnings.push(`${path}: defines ${set.join(" and ")}: as in kuperator, only ${set[0]} is checked.`);
    if (item.stage !== undefined && !(TRANSITION_STAGES as readonly string[]).includes(item.stage)) warnings.push(`${childPath(path, "stage")}: ${JSON.stringify(item.stage)} is no PodOpsLifecycle stage (${TRANSITION_STAGES.join(", ")}): the rule never runs.`);
    if ((item.conditions ?? []).length > 0) warnings.push(`${childPath(path, "conditions")}: no operation condition is defined, as in kuperator: the rule skips every pod.`);
    if (item.availablePolicy?.maxUnavailablePolicy !== undefined || item.availablePolicy?.minAvailablePolicy !== undefined) {
      warnings.push(`${childPath(path, "availablePolicy")}: maxUnavailablePolicy and minAvailablePolicy are accepted so kuperator manifests apply, but not acted on, as in kuperator: the values are.`);
    }
    if (item.webhook?.failurePolicy !== undefined) {
      warnings.push(`${childPath(path, "webhook.failurePolicy")}: accepted so kuperator manifests apply, but not acted on, as in kuperator: a webhook that fails or answers what is not its response holds the pods, and is asked again.`);
    }
  });
  return warnings;
}

/** The PodTransitionRule's parsed selector, or undefined when it has none or an invalid one (it then selects no pod). */
export function transitionRuleSelector(rule: Pick<PodTransitionRule, "spec">): ((labels: Readonly<Record<string, string>>) => boolean) | undefined {
  if (rule.spec.selector === undefined) return undefined;
  const parsed = parseLabelSelector(rule.spec.selector, "spec.selector");
  return parsed.ok ? parsed.matches : undefined;
}

