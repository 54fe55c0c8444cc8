// The rules of Kubernetes' affinity validation (pkg/apis/core/validation, 1.37:
// validateAffinity, ValidateNodeSelector, ValidateNodeSelectorTerm and the pod affinity term
// functions) for a decoration's overrideAffinity, which replaces the pod's, and for its node
// selector terms, which are ANDed into the pod's: beyond operators and values (checked by
// pod-validation.ts), keys must be label names and matchFields may only name metadata.name.
import { childPath, type FieldError, forbiddenError, indexPath, invalidError, requiredError } from "./field-errors.ts";
import { asList, asRecord, asString, isInteger, isSet, type JsonRecord } from "./json-shape.ts";
import type { Affinity, NodeSelectorTerm } from "./kubernetes.ts";
import { LabelSelectorSchema, type LabelSelector, validateLabelSelector } from "./label-selector.ts";
import { dns1123LabelErrors, dns1123SubdomainErrors, labelValueErrors, qualifiedNameErrors } from "./names.ts";
import { schemaChecker } from "./schema-validation.ts";

export function overrideAffinityRules(affinity: Affinity, path: string): FieldError[] {
  const errors: FieldError[] = [];
  const nodeAffinity = asRecord(affinity.nodeAffinity);
  if (nodeAffinity !== undefined) {
    const nodePath = childPath(path, "nodeAffinity");
    const required = asRecord(nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution);
    if (required !== undefined) {
      const termsPath = childPath(childPath(nodePath, "requiredDuringSchedulingIgnoredDuringExecution"), "nodeSelectorTerms");
      const terms = asList(required.nodeSelectorTerms);
      if (terms.length === 0) errors.push(requiredError(termsPath, "must have at least one node selector term"));
      terms.forEach((term, index) => errors.push(...nodeSelectorTermRules(asRecord(term) ?? {}, indexPath(termsPath, index), { strictValues: true, operators: true })));
    }
    asList(nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution).forEach((value, index) => {
      const termPath = indexPath(childPath(nodePath, "preferredDuringSchedulingIgnoredDuringExecution"), index);
      const term = asRecord(value) ?? {};
      errors.push(...weightErrors(term.weight, childPath(termPath, "weight")));
      // Preferred terms may use label values a required term may not (KEP: they can still succeed).
      errors.push(...nodeSelectorTermRules(asRecord(term.preference) ?? {}, childPath(termPath, "preference"), { strictValues: false, operators: true }));
    });
  }
  for (const kind of ["podAffinity", "podAntiAffinity"] as const) {
    const podAffinity = asRecord(affinity[kind]);
    if (podAffinity === undefined) continue;
    const kindPath = childPath(path, kind);
    asList(podAffinity.requiredDuringSchedulingIgnoredDuringExecution).forEach((term, index) => {
      errors.push(...podAffinityTermRules(asRecord(term) ?? {}, indexPath(childPath(kindPath, "requiredDuringSchedulingIgnoredDuringExecution"), index)));
    });
    asList(podAffinity.preferredDuringSchedulingIgnoredDuringExecution).forEach((value, index) => {
      const termPath = indexPath(childPath(kindPath, "preferredDuringSchedulingIgnoredDuringExecution"), index);
      const term = asRecord(value) ?? {};
      errors.push(...weightErrors(term.weight, childPath(termPath, "weight")));
      errors.push(...podAffinityTermRules(asRecord(term.podAffinityTerm) ?? {}, childPath(termPath, "podAffinityTerm")));
    });
  }
  return errors;
}

/**
 * A node selector term: expression keys are label names, values label values (where
 * `strictValues`); matchFields take only metadata.name with In or NotIn and exactly one node
 * name; with `operators`, also each operator and its number of values (which
 * pod-validation.ts checks for a decoration's own nodeSelectorTerms).
 */
export function nodeSelectorTermRules(term: NodeSelectorTerm | JsonRecord, path: string, options: { strictValues: boolean; operators: boolean }): FieldError[] {
  const { strictValues, operators } = options;
  const errors: FieldError[] = [];
  asList(term.matchExpressions).forEach((value, index) => {
    const requirementPath = indexPath(childPath(path, "matchExpressions"), index);
    const requirement = asRecord(value) ?? {};
    const key = asString(requirement.key) ?? "";
    if (key === "") {
      if (operators) errors.push(requiredError(childPath(requirementPath, "key")));
    } else {
      for (const reason of qualifiedNameErrors(key)) errors.push(invalidError(childPath(requirementPath, "key"), key, reason));
    }
    const values = asList(requirement.values);
    if (!operators) {
      // Operators and counts are checked elsewhere.
    } else if (!["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"].includes(requirement.operator as string)) {
      errors.push(invalidError(childPath(requirementPath, "operator"), requirement.operator, "not a valid selector operator"));
    } else if ((requirement.operator === "In" || requirement.operator === "NotIn") && values.length === 0) {
      errors.push(requiredError(childPath(requirementPath, "values"), "must be specified when `operator` is 'In' or 'NotIn'"));
    } else if ((requirement.operator === "Exists" || requirement.operator === "DoesNotExist") && values.length > 0) {
      errors.push(forbiddenError(childPath(requirementPath, "values"), "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"));
    } else if ((requirement.operator === "Gt" || requirement.operator === "Lt") && values.length !== 1) {
      errors.push(requiredError(childPath(requirementPath, "values"), "must be specified single value when `operator` is 'Lt' or 'Gt'"));
    }
    if (strictValues) {
      values.forEach((item, valueIndex) => {
        for (const reason of labelValueErrors(String(item))) errors.push(invalidError(indexPath(childPath(requirementPath, "values"), valueIndex), item, reason));
      });
    }
  });
  asList(term.matchFields).forEach((value, index) => {
    const requirementPath = indexPath(childPath(path, "matchFields"), index);
    const requirement = asRecord(value) ?? {};
    const values = asList(requirement.values);
    // matchFields are stricter than pod-validation.ts's generic requirement rules, so both apply.
    if (requirement.operator !== "In" && requirement.operator !== "NotIn") errors.push(invalidError(childPath(requirementPath, "operator"), requirement.operator, "not a valid selector operator"));
    // (No values at all is reported by pod-validation.ts when it runs.)
    else if (values.length > 1 || (operators && values.length === 0)) errors.push(requiredError(childPath(requirementPath, "values"), "must be only one value when `operator` is 'In' or 'NotIn' for node field selector"));
    if (requirement.key !== "metadata.name") errors.push(invalidError(childPath(requirementPath, "key"), requirement.key, "not a valid field selector key"));
    else {
      values.forEach((item, valueIndex) => {
        for (const reason of dns1123SubdomainErrors(String(item))) errors.push(invalidError(indexPath(childPath(requirementPath, "values"), valueIndex), item, reason));
      });
    }
  });
  return errors;
}

const selectorShape = schemaChecker(LabelSelectorSchema);

function podAffinityTermRules(term: JsonRecord, path: string): FieldError[] {
  const errors: FieldError[] = [];
  for (const field of ["labelSelector", "namespaceSelector"]) {
    if (!isSet(term[field])) continue;
    const shapeErrors = selectorShape.errors(term[field], childPath(path, field));
    errors.push(...(shapeErrors.length > 0 ? shapeErrors : validateLabelSelector(term[field] as LabelSelector, childPath(path, field))));
  }
  for (const namespace of asList(term.namespaces)) {
    for (const reason of dns1123LabelErrors(String(namespace))) errors.push(invalidError(childPath(path, "namespace"), namespace, reason));
  }
  const matchLabelKeys = asList(term.matchLabelKeys).map(String);
  const mismatchLabelKeys = asList(term.mismatchLabelKeys).map(String);
  for (const [field, keys] of [["matchLabelKeys", matchLabelKeys], ["mismatchLabelKeys", mismatchLabelKeys]] as const) {
    if (keys.length === 0) continue;
    if (!isSet(term.labelSelector)) {
      errors.push(forbiddenError(childPath(path, field), "must not be specified when labelSelector is not set"));
      continue;
    }
    keys.forEach((key, index) => {
      for (const reason of qualifiedNameErrors(key)) errors.push(invalidError(indexPath(childPath(path, field), index), key, reason));
    });
  }
  // A Set, not a search of the list per key: both lists come from the request, and may be long.
  const mismatched = new Set(mismatchLabelKeys);
  matchLabelKeys.forEach((key, index) => {
    if (mismatched.has(key)) errors.push(invalidError(indexPath(childPath(path, "matchLabelKeys"), index), key, "exists in both matchLabelKeys and mismatchLabelKeys"));
  });
  const topologyKey = asString(term.topologyKey) ?? "";
  if (topologyKey === "") errors.push(requiredError(childPath(path, "topologyKey"), "can not be empty"));
  else for (const reason of qualifiedNameErrors(topologyKey)) errors.push(invalidError(childPath(path, "topologyKey"), topologyKey, reason));
  return errors;
}

function weightErrors(weight: unknown, path: string): FieldError[] {
  return isInteger(weight) && weight >= 1 && weight <= 100 ? [] : [invalidError(path, weight, "must be in the range 1-100")];
}
