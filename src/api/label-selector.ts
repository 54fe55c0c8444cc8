// metav1.LabelSelector: its schema, its validation and its meaning. The meaning lives here,
// next to the type, because both the engine (which decorations select a pod) and CollaSet
// validation (the selector must match the template's labels) need it.
import Type, { type Static } from "typebox";
import { childPath, type FieldError, forbiddenError, indexPath, invalidError, keyPath, notSupportedError, requiredError } from "./field-errors.ts";
import { labelValueErrors, qualifiedNameErrors } from "./names.ts";
import { LabelMap, LabelValue, StringEnum } from "./openapi.ts";

export const LABEL_SELECTOR_OPERATORS = ["In", "NotIn", "Exists", "DoesNotExist"] as const;

export const LabelSelectorRequirementSchema = Type.Object({
  key: Type.String(),
  operator: StringEnum(LABEL_SELECTOR_OPERATORS),
  values: Type.Optional(Type.Array(LabelValue())),
});

export const LabelSelectorSchema = Type.Object(
  {
    matchLabels: Type.Optional(LabelMap()),
    matchExpressions: Type.Optional(Type.Array(LabelSelectorRequirementSchema)),
  },
  { "x-kubernetes-map-type": "atomic" },
);

export type LabelSelector = Static<typeof LabelSelectorSchema>;
export type LabelSelectorRequirement = Static<typeof LabelSelectorRequirementSchema>;
export type Labels = Readonly<Record<string, string>>;

/** Whether a label set satisfies a selector. */
export type LabelMatcher = (labels: Labels) => boolean;

export type ParsedLabelSelector = { ok: true; matches: LabelMatcher } | { ok: false; errors: FieldError[] };

/**
 * Validates a selector and compiles it to a matcher with Kubernetes semantics: every
 * `matchLabels` pair and every `matchExpressions` requirement must hold; `{}` matches
 * everything. `path` prefixes the field paths of errors.
 */
export function parseLabelSelector(selector: LabelSelector, path = "selector"): ParsedLabelSelector {
  const errors = validateLabelSelector(selector, path);
  if (errors.length > 0) return { ok: false, errors };
  const keys = Object.keys(selector.matchLabels ?? {});
  const values = Object.values(selector.matchLabels ?? {});
  const requirements = (selector.matchExpressions ?? []).map(compileRequirement);
  // Plain loops: a pod is tested against every selector of its namespace, and this allocates nothing.
  const matches: LabelMatcher = (labels) => {
    for (let index = 0; index < keys.length; index++) if (labels[keys[index]!] !== values[index]) return false;
    for (let index = 0; index < requirements.length; index++) if (!requirements[index]!(labels)) return false;
    return true;
  };
  return { ok: true, matches };
}

function compileRequirement(requirement: LabelSelectorRequirement): LabelMatcher {
  const { key } = requirement;
  const values = new Set(requirement.values ?? []);
  switch (requirement.operator) {
    case "In":
      return (labels) => Object.hasOwn(labels, key) && values.has(labels[key] ?? "");
    case "NotIn":
      // As in apimachinery: a pod without the key satisfies NotIn.
      return (labels) => !Object.hasOwn(labels, key) || !values.has(labels[key] ?? "");
    case "Exists":
      return (labels) => Object.hasOwn(labels, key);
    case "DoesNotExist":
      return (labels) => !Object.hasOwn(labels, key);
  }
}

/** Structural validation of a selector, as the API server does for Deployments and Services. */
export function validateLabelSelector(selector: LabelSelector, path: string): FieldError[] {
  const errors: FieldError[] = [];
  const matchLabelsPath = childPath(path, "matchLabels");
  for (const [key, value] of Object.entries(selector.matchLabels ?? {})) {
    for (const reason of qualifiedNameErrors(key)) errors.push(invalidError(matchLabelsPath, key, reason));
    for (const reason of labelValueErrors(value)) errors.push(invalidError(keyPath(matchLabelsPath, key), value, reason));
  }
  (selector.matchExpressions ?? []).forEach((requirement, index) => {
    const requirementPath = indexPath(childPath(path, "matchExpressions"), index);
    errors.push(...validateRequirement(requirement, requirementPath));
  });
  return errors;
}

function validateRequirement(requirement: LabelSelectorRequirement, path: string): FieldError[] {
  const errors: FieldError[] = [];
  for (const reason of qualifiedNameErrors(requirement.key)) errors.push(invalidError(childPath(path, "key"), requirement.key, reason));
  const values = requirement.values ?? [];
  const valuesPath = childPath(path, "values");
  // Another operator is reachable only with input that skipped schema validation.
  errors.push(...(setOperatorValuesErrors(requirement.operator, values, valuesPath) ?? [notSupportedError(childPath(path, "operator"), requirement.operator, LABEL_SELECTOR_OPERATORS)]));
  values.forEach((value, index) => {
    for (const reason of labelValueErrors(value)) errors.push(invalidError(indexPath(valuesPath, index), value, reason));
  });
  return errors;
}

/**
 * What the set-based operators (In, NotIn, Exists, DoesNotExist) ask of a requirement's values,
 * in label and node selectors alike; undefined for any other operator (the caller judges it).
 */
export function setOperatorValuesErrors(operator: string, values: readonly string[], valuesPath: string): FieldError[] | undefined {
  switch (operator) {
    case "In":
    case "NotIn":
      return values.length === 0 ? [requiredError(valuesPath, "must be specified when `operator` is 'In' or 'NotIn'")] : [];
    case "Exists":
    case "DoesNotExist":
      return values.length > 0 ? [forbiddenError(valuesPath, "may not be specified when `operator` is 'Exists' or 'DoesNotExist'")] : [];
    default:
      return undefined;
  }
}

/** True for `{}` (and only then): a selector that selects every object. */
export function isEmptySelector(selector: LabelSelector): boolean {
  return Object.keys(selector.matchLabels ?? {}).length === 0 && (selector.matchExpressions ?? []).length === 0;
}
