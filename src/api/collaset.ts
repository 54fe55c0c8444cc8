// CollaSet (apps.kusionstack.io/v1alpha1, DESIGN §6), the subset of KusionStack's that this
// project runs, plus the fields its manifests carry so they apply unchanged. Like
// poddecoration.ts, the schema is the type, the CRD schema and the validator.
//
// Exports: CollaSet, CollaSetSpec, CollaSetStatus (types); defaultCollaSet(cls): CollaSet (pure);
// validateCollaSet(value): FieldError[].
import Type, { type Static } from "typebox";
import { Value } from "typebox/value";
import { childPath, duplicateError, type FieldError, indexPath, invalidError, requiredError } from "./field-errors.ts";
import { dns1123LabelErrors, matchesDns1123Label } from "./names.ts";
import { COLLASET_KIND } from "./group.ts";
import { ConditionSchema, PodTemplateSpecSchema } from "./kubernetes.ts";
import { isEmptySelector, LabelSelectorSchema, parseLabelSelector } from "./label-selector.ts";
import { withoutNullFields } from "./null-fields.ts";
import { IntOrString, OpenObject, StringEnum } from "./openapi.ts";
import { validateMaxUnavailable } from "./max-unavailable.ts";
import { validateContainers, validateLabels, validateVolumes } from "./pod-validation.ts";
import { kindObjectSchema, kindValidator } from "./kind-envelope.ts";

export const COLLASET_PLURAL = "collasets";

// KusionStack spells it ReCreate (accepted, as Recreate); Replace makes a surge pod of the new
// revision first and removes the pod once that one serves (controller/collaset/replace-plan.ts).
export const POD_UPGRADE_POLICIES = ["Recreate", "InPlaceIfPossible", "InPlaceOnly", "ReCreate", "Replace"] as const;
export type PodUpgradePolicy = (typeof POD_UPGRADE_POLICIES)[number];

/** Policies under which every update recreates the pod, even one that could be made in place. */
export function recreatesAlways(policy: PodUpgradePolicy): boolean {
  return policy === "Recreate" || policy === "ReCreate";
}
export const PVC_RETENTION_POLICIES = ["Retain", "Delete"] as const;

export const CollaSetSpecSchema = Type.Object({
  paused: Type.Optional(Type.Boolean({ description: "Stops scaling and updating." })),
  replicas: Type.Optional(Type.Integer({ minimum: 0, default: 0 })),
  selector: LabelSelectorSchema,
  template: PodTemplateSpecSchema,
  volumeClaimTemplates: Type.Optional(Type.Array(OpenObject())),
  updateStrategy: Type.Optional(Type.Object({
    rollingUpdate: Type.Optional(Type.Object({
      byPartition: Type.Optional(Type.Object({
        partition: Type.Optional(Type.Integer({ minimum: 0, description: "Number of pods that stay on their current revision." })),
      })),
      byLabel: Type.Optional(Type.Object({})),
      maxUnavailable: Type.Optional(IntOrString({
        default: 1,
        description: "Pods of this CollaSet that an update may make unavailable at once: a count or a percentage of replicas.",
      })),
    }, { default: {} })),
    podUpgradePolicy: Type.Optional(StringEnum(POD_UPGRADE_POLICIES, {
      default: "InPlaceIfPossible",
      description: "InPlaceIfPossible updates images and metadata in place and recreates otherwise; InPlaceOnly never recreates; Recreate (KusionStack's ReCreate) always recreates; Replace makes a pod of the new revision first and deletes the old one once the new one serves.",
    })),
    operationDelaySeconds: Type.Optional(Type.Integer({ minimum: 0 })),
  }, { default: {} })),
  scaleStrategy: Type.Optional(Type.Object({
    context: Type.Optional(Type.String()),
    podToExclude: Type.Optional(Type.Array(Type.String())),
    podToInclude: Type.Optional(Type.Array(Type.String())),
    podToDelete: Type.Optional(Type.Array(Type.String(), { description: "Names of pods to delete (and replace, while replicas stays)." })),
    persistentVolumeClaimRetentionPolicy: Type.Optional(Type.Object({
      whenDeleted: Type.Optional(StringEnum(PVC_RETENTION_POLICIES)),
      whenScaled: Type.Optional(StringEnum(PVC_RETENTION_POLICIES)),
    })),
    operationDelaySeconds: Type.Optional(Type.Integer({ minimum: 0 })),
  })),
  namingStrategy: Type.Optional(Type.Object({
    podNamingSuffixPolicy: Type.Optional(Type.String({
      description: "PersistentSequence names each pod <collaset>-<instance id>; Random (the default, and any other value, as in KusionStack) lets the API server add a random suffix.",
    })),
  })),
  historyLimit: Type.Optional(Type.Integer({ minimum: 0, default: 20, description: "ControllerRevisions kept; 0 keeps only those in use (the current and updated revisions, and those a pod records)." })),
});
export type CollaSetSpec = Static<typeof CollaSetSpecSchema>;

export const CollaSetStatusSchema = Type.Object({
  observedGeneration: Type.Optional(Type.Integer()),
  currentRevision: Type.Optional(Type.String()),
  updatedRevision: Type.Optional(Type.String()),
  collisionCount: Type.Optional(Type.Integer()),
  replicas: Type.Optional(Type.Integer()),
  readyReplicas: Type.Optional(Type.Integer()),
  availableReplicas: Type.Optional(Type.Integer()),
  updatedReplicas: Type.Optional(Type.Integer()),
  updatedReadyReplicas: Type.Optional(Type.Integer()),
  updatedAvailableReplicas: Type.Optional(Type.Integer()),
  scheduledReplicas: Type.Optional(Type.Integer({ description: "Pods not being deleted that are scheduled (condition PodScheduled=True)." })),
  operatingReplicas: Type.Optional(Type.Integer({ description: "Pods not being deleted that are being updated in place: the node does not run the images their spec names yet." })),
  terminatingReplicas: Type.Optional(Type.Integer({ description: "Pods being deleted (scaled in, or deleted for recreation)." })),
  conditions: Type.Optional(Type.Array(ConditionSchema)),
});
export type CollaSetStatus = Static<typeof CollaSetStatusSchema>;

export const CollaSetSchema = kindObjectSchema(CollaSetSpecSchema, CollaSetStatusSchema);
export type CollaSet = Static<typeof CollaSetSchema>;

/** Fills in every schema default, null fields read as absent; pure and tolerant of malformed input. */
export function defaultCollaSet(cls: CollaSet): CollaSet {
  return Value.Default(CollaSetSchema, withoutNullFields(cls)) as CollaSet;
}

const collaSetValidator = kindValidator({ kind: COLLASET_KIND, specSchema: CollaSetSpecSchema, validateSpec });

/** Structural validation, before or after defaulting, null fields read as absent; status is not validated. */
export function validateCollaSet(value: unknown): FieldError[] {
  return collaSetValidator(value);
}

function validateSpec(spec: CollaSetSpec): FieldError[] {
  const errors: FieldError[] = [];
  const templateLabels = spec.template.metadata?.labels ?? {};
  errors.push(...validateLabels(templateLabels, "spec.template.metadata.labels"));
  const selector = parseLabelSelector(spec.selector, "spec.selector");
  if (!selector.ok) {
    errors.push(...selector.errors);
  } else if (isEmptySelector(spec.selector)) {
    errors.push(invalidError("spec.selector", spec.selector, "empty selector is invalid: it would select every pod in the namespace"));
  } else if (!selector.matches(templateLabels)) {
    errors.push(invalidError("spec.template.metadata.labels", templateLabels, "`selector` does not match template `labels`"));
  }

  const podSpec = spec.template.spec;
  if (podSpec === undefined) {
    errors.push(requiredError("spec.template.spec"));
  } else {
    if (podSpec.containers.length === 0) errors.push(requiredError("spec.template.spec.containers", "a pod needs at least one container"));
    errors.push(...validateContainers([
      ...(podSpec.initContainers ?? []).map((container, index) => ({ container, path: indexPath("spec.template.spec.initContainers", index) })),
      ...podSpec.containers.map((container, index) => ({ container, path: indexPath("spec.template.spec.containers", index) })),
    ]));
    errors.push(...validateVolumes(podSpec.volumes ?? [], "spec.template.spec.volumes"));
  }

  const maxUnavailable = spec.updateStrategy?.rollingUpdate?.maxUnavailable;
  if (maxUnavailable !== undefined) errors.push(...validateMaxUnavailable(maxUnavailable, "spec.updateStrategy.rollingUpdate.maxUnavailable"));

  (spec.scaleStrategy?.podToDelete ?? []).forEach((name, index) => {
    if (name === "") errors.push(requiredError(indexPath(childPath("spec.scaleStrategy", "podToDelete"), index)));
  });
  errors.push(...validateClaimTemplates(spec.volumeClaimTemplates ?? [], "spec.volumeClaimTemplates"));
  return errors;
}

/** Each claim template names the pod volume it becomes: required, a DNS label, unique. */
function validateClaimTemplates(templates: readonly unknown[], path: string): FieldError[] {
  const errors: FieldError[] = [];
  const seen = new Set<string>();
  templates.forEach((template, index) => {
    const namePath = childPath(childPath(indexPath(path, index), "metadata"), "name");
    const name = (template as { metadata?: { name?: unknown } }).metadata?.name;
    if (typeof name !== "string" || name === "") errors.push(requiredError(namePath));
    else if (!matchesDns1123Label(name)) errors.push(invalidError(namePath, name, dns1123LabelErrors(name).join("; ")));
    else if (seen.has(name)) errors.push(duplicateError(namePath, name));
    if (typeof name === "string") seen.add(name);
  });
  return errors;
}

/** A positive count or a percentage in (0%, 100%]: with 0 no pod could ever be updated. */
