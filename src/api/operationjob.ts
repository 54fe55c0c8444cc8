// OperationJob (apps.kusionstack.io/v1alpha1, kube-api's operationjob_types.go): an operation on
// pods named in the job's namespace — `Replace`, as kuperator ships it — with a partition (how many
// targets to operate on, raised step by step), deadlines and a time to live. The schema is
// kuperator's, field for field (TTLSecondsAfterFinished with its capital T); like the other kinds
// here it is the type, the CRD schema and the validator (DESIGN §1). What the API server checks
// against the stored object (the action and targets immutable, the partition never lowered) is
// CEL in the CRD, so it holds whoever writes.
//
// Exports: OperationJob, OperationJobStatus, OpsStatus (types); defaultOperationJob (pure);
// validateOperationJob(value): FieldError[]; operationJobWarnings; the action and progress names.
import Type, { type Static } from "typebox";
import { Value } from "typebox/value";
import { childPath, duplicateError, type FieldError, indexPath, invalidError, requiredError } from "./field-errors.ts";
import { OPERATIONJOB_KIND } from "./group.ts";
import { kindObjectSchema, kindValidator } from "./kind-envelope.ts";
import { dns1123SubdomainErrors, matchesDns1123Subdomain } from "./names.ts";
import { withoutNullFields } from "./null-fields.ts";
import { StringMap } from "./openapi.ts";

export const OPERATIONJOB_PLURAL = "operationjobs";

/** kube-api's OpsActionReplace and OpsActionRestart; kuperator ships Replace alone. */
export const REPLACE_ACTION = "Replace";
export const RESTART_ACTION = "Restart";

export const OPERATION_PROGRESSES = ["Pending", "Processing", "Failed", "Succeeded"] as const;
export type OperationProgress = (typeof OPERATION_PROGRESSES)[number];

/** kuperator's webhook defaults: 3 hours to finish a target, 30 minutes to live once finished. */
export const DEFAULT_ACTIVE_DEADLINE_SECONDS = 3 * 60 * 60;
export const DEFAULT_TTL_SECONDS_AFTER_FINISHED = 30 * 60;

const immutable = (what: string) => ({ "x-kubernetes-validations": [{ rule: "self == oldSelf", message: `${what} is immutable` }] });

export const OperationJobSpecSchema = Type.Object({
  action: Type.Optional(Type.String({ maxLength: 63, description: "The operation: Replace (a pod of a CollaSet gets a pod of its own revision first, then goes).", ...immutable("spec.action") })),
  // Bounded, so that the API server can cost the CEL that keeps them immutable.
  targets: Type.Optional(Type.Array(Type.Object({
    name: Type.Optional(Type.String({ maxLength: 253, description: "A pod of the job's namespace." })),
    containers: Type.Optional(Type.Array(Type.String({ maxLength: 63 }), { maxItems: 64 })),
  }), { maxItems: 5000, description: "The pods to operate on, in the order the partition takes them.", ...immutable("spec.targets") })),
  partition: Type.Optional(Type.Integer({ minimum: 0, description: "How many targets are operated on (all when unset); raise it to go on." })),
  operationDelaySeconds: Type.Optional(Type.Integer({ minimum: 0, description: "Seconds between a target's pod being allowed to go (out of traffic) and its deletion, in place of its owner's delay." })),
  activeDeadlineSeconds: Type.Optional(Type.Integer({ minimum: 1, default: DEFAULT_ACTIVE_DEADLINE_SECONDS, description: "A target still not done this long after it started fails (and is let go)." })),
  TTLSecondsAfterFinished: Type.Optional(Type.Integer({ minimum: 1, default: DEFAULT_TTL_SECONDS_AFTER_FINISHED, description: "The job is deleted this long after it finished." })),
}, {
  "x-kubernetes-validations": [{ rule: "!has(oldSelf.partition) || (has(self.partition) && self.partition >= oldSelf.partition)", message: "spec.partition should not be decreased", fieldPath: ".partition" }],
});
export type OperationJobSpec = Static<typeof OperationJobSpecSchema>;

export const OpsStatusSchema = Type.Object({
  name: Type.Optional(Type.String()),
  progress: Type.Optional(Type.String()),
  startTime: Type.Optional(Type.String({ format: "date-time" })),
  endTime: Type.Optional(Type.String({ format: "date-time" })),
  extraInfo: Type.Optional(StringMap()),
  error: Type.Optional(Type.Object({ reason: Type.Optional(Type.String()), message: Type.Optional(Type.String()) })),
});
export type OpsStatus = Static<typeof OpsStatusSchema>;

export const OperationJobStatusSchema = Type.Object({
  observedGeneration: Type.Optional(Type.Integer()),
  progress: Type.Optional(Type.String()),
  startTime: Type.Optional(Type.String({ format: "date-time" })),
  endTime: Type.Optional(Type.String({ format: "date-time" })),
  totalPodCount: Type.Optional(Type.Integer()),
  succeededPodCount: Type.Optional(Type.Integer()),
  failedPodCount: Type.Optional(Type.Integer()),
  targetDetails: Type.Optional(Type.Array(OpsStatusSchema)),
});
export type OperationJobStatus = Static<typeof OperationJobStatusSchema>;

export const OperationJobSchema = kindObjectSchema(OperationJobSpecSchema, OperationJobStatusSchema);
export type OperationJob = Static<typeof OperationJobSchema>;

/** Fills in kuperator's defaults (activeDeadlineSeconds, TTLSecondsAfterFinished); null fields read as absent. */
export function defaultOperationJob(job: OperationJob): OperationJob {
  return Value.Default(OperationJobSchema, withoutNullFields(job)) as OperationJob;
}

const validator = kindValidator({ kind: OPERATIONJOB_KIND, specSchema: OperationJobSpecSchema, validateSpec });

/** Structural validation, null fields read as absent; what depends on the stored object is the CRD's CEL. */
export function validateOperationJob(value: unknown): FieldError[] {
  return validator(value);
}

function validateSpec(spec: OperationJobSpec): FieldError[] {
  const errors: FieldError[] = [];
  if ((spec.action ?? "") === "") errors.push(requiredError("spec.action", "spec.action should not be empty"));
  const targets = spec.targets ?? [];
  if (targets.length === 0) errors.push(requiredError("spec.targets", "target can not be empty"));
  const names = new Set<string>();
  targets.forEach((target, index) => {
    const path = indexPath("spec.targets", index);
    const name = target.name ?? "";
    if (name === "") errors.push(requiredError(childPath(path, "name")));
    // A pod's name: `other-namespace/pod` names no pod here.
    else if (!matchesDns1123Subdomain(name)) errors.push(invalidError(childPath(path, "name"), name, dns1123SubdomainErrors(name).join("; ")));
    else if (names.has(name)) errors.push(duplicateError(childPath(path, "name"), name));
    names.add(name);
    const containers = new Set<string>();
    (target.containers ?? []).forEach((container, containerIndex) => {
      if (containers.has(container)) errors.push(duplicateError(indexPath(childPath(path, "containers"), containerIndex), container));
      containers.add(container);
    });
  });
  return errors;
}

/** Warnings about a valid OperationJob: what kuperator accepts and does not do. */
export function operationJobWarnings(job: OperationJob): string[] {
  const { spec } = withoutNullFields(job);
  const warnings: string[] = [];
  if (spec.action !== undefined && spec.action !== REPLACE_ACTION) warnings.push(`spec.action: ${JSON.stringify(spec.action)} is not an action this project (nor kuperator, which ships Replace) performs: the job does nothing.`);
  if (spec.action === REPLACE_ACTION && (spec.targets ?? []).some((target) => (target.containers ?? []).length > 0)) warnings.push("spec.targets[].containers: a Replace replaces the whole pod; the containers named are not read.");
  return warnings;
}
