// Defaulting and structural validation of our own kinds at admission (DESIGN §7): the
// mutating webhook writes the schema defaults, the validating webhook refuses an object
// with every `Kind/name: field.path: reason` at once.
import { formatFieldErrors, type FieldError } from "../api/field-errors.ts";
import { defaultCollaSet, validateCollaSet, type CollaSet } from "../api/collaset.ts";
import { collaSetWarnings } from "../api/collaset-warnings.ts";
import { CLUSTER_POD_DECORATION_KIND, COLLASET_KIND, GROUP, OPERATIONJOB_KIND, OWN_GROUP, POD_DECORATION_KIND, PODTRANSITIONRULE_KIND } from "../api/group.ts";
import { defaultClusterPodDecoration, validateClusterPodDecoration, type ClusterPodDecoration } from "../api/cluster-poddecoration.ts";
import { defaultOperationJob, operationJobWarnings, validateOperationJob, type OperationJob } from "../api/operationjob.ts";
import { defaultPodTransitionRule, podTransitionRuleWarnings, validatePodTransitionRule, type PodTransitionRule } from "../api/podtransitionrule.ts";
import { defaultPodDecoration, validatePodDecoration, type PodDecoration } from "../api/poddecoration.ts";
import { podDecorationDefaultingWarnings, podDecorationWarnings } from "../api/poddecoration-warnings.ts";
import { allow, allowWithPatch, deny, type AdmissionRequest } from "./admission-review.ts";
import { createJsonPatch } from "./json-patch.ts";
import type { SynchronousAdmissionHandler } from "./server.ts";

interface Kind<T> {
  kind: string;
  /** Default KusionStack's. */
  group?: string;
  defaults: (object: T) => T;
  validate: (object: unknown) => FieldError[];
  /** Warnings about a valid object as written (before defaulting) and as it will be stored. */
  defaultingWarnings: (object: T) => string[];
  warnings: (object: T) => string[];
}

const podDecorationKind: Kind<PodDecoration> = {
  kind: POD_DECORATION_KIND,
  defaults: defaultPodDecoration,
  validate: validatePodDecoration,
  defaultingWarnings: podDecorationDefaultingWarnings,
  warnings: podDecorationWarnings,
};
const collaSetKind: Kind<CollaSet> = { kind: COLLASET_KIND, defaults: defaultCollaSet, validate: validateCollaSet, defaultingWarnings: () => [], warnings: collaSetWarnings };
const clusterPodDecorationKind: Kind<ClusterPodDecoration> = {
  kind: CLUSTER_POD_DECORATION_KIND,
  group: OWN_GROUP,
  defaults: defaultClusterPodDecoration,
  validate: validateClusterPodDecoration,
  // The template and its strategies mean what a PodDecoration's mean: the same warnings.
  defaultingWarnings: (cpd) => podDecorationDefaultingWarnings(cpd),
  warnings: (cpd) => podDecorationWarnings(cpd),
};

export const defaultPodDecorations = defaulting(podDecorationKind);
export const validatePodDecorations = validation(podDecorationKind);
export const defaultCollaSets = defaulting(collaSetKind);
export const validateCollaSets = validation(collaSetKind);
export const defaultClusterPodDecorations = defaulting(clusterPodDecorationKind);
export const validateClusterPodDecorations = validation(clusterPodDecorationKind);
const podTransitionRuleKind: Kind<PodTransitionRule> = { kind: PODTRANSITIONRULE_KIND, defaults: defaultPodTransitionRule, validate: validatePodTransitionRule, defaultingWarnings: () => [], warnings: podTransitionRuleWarnings };
export const defaultPodTransitionRules = defaulting(podTransitionRuleKind);
export const validatePodTransitionRules = validation(podTransitionRuleKind);
const operationJobKind: Kind<OperationJob> = { kind: OPERATIONJOB_KIND, defaults: defaultOperationJob, validate: validateOperationJob, defaultingWarnings: () => [], warnings: operationJobWarnings };
export const defaultOperationJobs = defaulting(operationJobKind);
export const validateOperationJobs = validation(operationJobKind);

function handles(request: AdmissionRequest, kind: string, group: string): boolean {
  return (
    (request.operation === "CREATE" || request.operation === "UPDATE") &&
    request.kind.group === group &&
    request.kind.kind === kind &&
    (request.subResource ?? "") === "" &&
    request.object != null
  );
}

function defaulting<T>(kind: Kind<T>): SynchronousAdmissionHandler {
  return (request) => {
    if (!handles(request, kind.kind, kind.group ?? GROUP)) return { response: allow(request.uid), result: "allowed" };
    // An invalid object is left as it is: the validating webhook explains what is wrong with it.
    if (kind.validate(request.object).length > 0) return { response: allow(request.uid), result: "skipped" };
    const patch = createJsonPatch(request.object, kind.defaults(request.object as T));
    return { response: allowWithPatch(request.uid, patch, kind.defaultingWarnings(request.object as T)), result: patch.length > 0 ? "injected" : "skipped" };
  };
}

function validation<T>(kind: Kind<T>): SynchronousAdmissionHandler {
  return (request) => {
    if (!handles(request, kind.kind, kind.group ?? GROUP)) return { response: allow(request.uid), result: "allowed" };
    // An object on its way out must stay writable, or an invalid one could never lose its finalizer.
    if (request.operation === "UPDATE" && isBeingDeleted(request.object)) return { response: allow(request.uid), result: "allowed" };
    const errors = kind.validate(request.object);
    if (errors.length === 0) return { response: allow(request.uid, kind.warnings(request.object as T)), result: "allowed" };
    const name = request.name ?? (request.object as { metadata?: { name?: string } }).metadata?.name;
    return { response: deny(request.uid, 422, formatFieldErrors(kind.kind, name, errors).join("; ")), result: "rejected" };
  };
}

function isBeingDeleted(object: unknown): boolean {
  const metadata = (object as { metadata?: { deletionTimestamp?: unknown } } | null | undefined)?.metadata;
  return metadata?.deletionTimestamp != null;
}
