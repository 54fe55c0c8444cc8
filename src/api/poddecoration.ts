// PodDecoration (apps.kusionstack.io/v1alpha1, DESIGN §2), defined once: the TypeBox schema
// below is the TypeScript type (`Static<>`), the CRD's openAPIV3Schema (src/api/crd.ts) and
// the runtime validator. Defaults live in the schema (`default:`), so the API server's CRD
// defaulting and `defaultPodDecoration` cannot disagree.
//
// Exports the rest of the project builds on:
//   PodDecoration, PodDecorationSpec, PodDecorationTemplate … (types)
//   defaultPodDecoration(pd): PodDecoration          pure, returns a new object
//   validatePodDecoration(value): FieldError[]       structural validation, paths like spec.template.containers[0].name
//   decorationGroup(pd), decorationWeight(pd)         the effective injectStrategy (with the spec.weight alias)
import Type, { type Static } from "typebox";
import { Value } from "typebox/value";
import { childPath, type FieldError, forbiddenError, indexPath, invalidError, keyPath, requiredError, tooLongError } from "./field-errors.ts";
import { POD_DECORATION_KIND } from "./group.ts";
import {
  AffinitySchema,
  ConditionSchema,
  ContainerProperties,
  ContainerSchema,
  EnvVarSchema,
  NodeSelectorTermSchema,
  TolerationSchema,
  VolumeMountSchema,
  VolumeSchema,
} from "./kubernetes.ts";
import { type LabelSelector, LabelSelectorSchema, validateLabelSelector } from "./label-selector.ts";
import { dns1123SubdomainErrors } from "./names.ts";
import { overrideAffinityRules, nodeSelectorTermRules } from "./affinity-rules.ts";
import { ANNOTATIONS_SIZE_LIMIT, annotationsTooLong } from "./annotations.ts";
import { containerRules, primaryPatchRules } from "./container-rules.ts";
import { volumeSourceRules } from "./volume-rules.ts";
import { withoutNullFields } from "./null-fields.ts";
import { Dns1123Subdomain, IntOrString, LabelMap, OpenObjectOf, StringEnum, StringMap } from "./openapi.ts";
import { validateMaxUnavailable } from "./max-unavailable.ts";
import { reservedKeyErrors } from "./reserved-keys.ts";
import { kindObjectSchema, kindValidator } from "./kind-envelope.ts";
import {
  validateAnnotationKeys,
  validateContainers,
  validateEnv,
  validateLabels,
  validateNodeSelectorTerm,
  validateTolerations,
  validateVolumeMounts,
  validateVolumes,
} from "./pod-validation.ts";

export const POD_DECORATION_PLURAL = "poddecorations";

export const METADATA_PATCH_POLICIES = ["Retain", "Overwrite", "MergePatchJson"] as const;
export const PRIMARY_CONTAINER_TARGET_POLICIES = ["ByName", "All", "First", "Last"] as const;
export const CONTAINER_INJECT_POLICIES = ["BeforePrimaryContainer", "AfterPrimaryContainer"] as const;
export const DEFAULT_HISTORY_LIMIT = 20;
/** The new-pod policy (the KusionStack proposal's "case 3"). */
export const NEW_POD_REVISIONS = ["Updated", "Current"] as const;
/** What a rollout does with a pod of another owner than a CollaSet whose change cannot be made in place. */
export const RECREATE_POLICIES = ["Never", "Evict"] as const;

export const MetadataPatchSchema = Type.Object({
  patchPolicy: Type.Optional(StringEnum(METADATA_PATCH_POLICIES, {
    default: "Retain",
    description: "Retain sets a key only when the pod lacks it; Overwrite always sets it; MergePatchJson merges JSON annotation values (RFC 7386).",
  })),
  labels: Type.Optional(LabelMap()),
  annotations: Type.Optional(StringMap()),
});
export type MetadataPatch = Static<typeof MetadataPatchSchema>;

export const PrimaryContainerPatchSchema = Type.Object({
  // No schema default: the default depends on whether `name` is set (primaryTargetPolicy).
  targetPolicy: Type.Optional(StringEnum(PRIMARY_CONTAINER_TARGET_POLICIES, {
    description: "Which of the pod's own containers to patch: the one named `name`, all, the first or the last. Unset: ByName when name is set, else All.",
  })),
  name: Type.Optional(Type.String()),
  image: Type.Optional(Type.String()),
  env: Type.Optional(Type.Array(EnvVarSchema)),
  volumeMounts: Type.Optional(Type.Array(VolumeMountSchema)),
});
export type PrimaryContainerPatch = Static<typeof PrimaryContainerPatchSchema>;

export const ContainerPatchSchema = OpenObjectOf(
  {
    ...ContainerProperties,
    injectPolicy: Type.Optional(StringEnum(CONTAINER_INJECT_POLICIES, {
      default: "BeforePrimaryContainer",
      description: "Insert the sidecar just before the pod's first own container, or append it at the end.",
    })),
  },
);
export type ContainerPatch = Static<typeof ContainerPatchSchema>;

export const DecorationAffinitySchema = Type.Object({
  overrideAffinity: Type.Optional(AffinitySchema),
  nodeSelectorTerms: Type.Optional(Type.Array(NodeSelectorTermSchema, {
    description: "ANDed into the pod's required node selector terms: a decoration can only narrow scheduling.",
  })),
});

export const PodDecorationTemplateSchema = Type.Object({
  metadata: Type.Optional(Type.Array(MetadataPatchSchema)),
  initContainers: Type.Optional(Type.Array(ContainerSchema)),
  primaryContainers: Type.Optional(Type.Array(PrimaryContainerPatchSchema)),
  containers: Type.Optional(Type.Array(ContainerPatchSchema)),
  volumes: Type.Optional(Type.Array(VolumeSchema)),
  affinity: Type.Optional(DecorationAffinitySchema),
  tolerations: Type.Optional(Type.Array(TolerationSchema)),
  runtimeClassName: Type.Optional(Dns1123Subdomain()),
});
export type PodDecorationTemplate = Static<typeof PodDecorationTemplateSchema>;

export const InjectStrategySchema = Type.Object({
  group: Type.Optional(Type.String({ description: "Decorations sharing a non-empty group are exclusive: only those with the highest weight apply." })),
  // No schema default: a defaulted 0 would hide the spec.weight alias (see decorationWeight).
  weight: Type.Optional(Type.Integer({ description: "Priority within the group and rendering order; 0 when unset (or spec.weight)." })),
});
export type InjectStrategy = Static<typeof InjectStrategySchema>;

/**
 * A decoration's spec fields: a PodDecoration's, and — with the fields it adds to the rolling
 * update — a ClusterPodDecoration's (cluster-poddecoration.ts).
 */
export function decorationSpecProperties<Extra extends Record<string, ReturnType<typeof Type.Optional>>>(rollingUpdateExtra: Extra) {
  return {
    selector: Type.Optional(Type.Unsafe<LabelSelector>({
      ...LabelSelectorSchema,
      description: "Pods of the namespace to decorate; {} selects every pod, an unset selector none.",
    })),
    injectStrategy: Type.Optional(InjectStrategySchema),
    weight: Type.Optional(Type.Integer({ description: "KusionStack's field for injectStrategy.weight; used when injectStrategy.weight is unset." })),
    updateStrategy: Type.Optional(Type.Object({
      rollingUpdate: Type.Optional(Type.Object({
        partition: Type.Optional(Type.Integer({ minimum: 0, description: "Number of matched pods (with selector: of the pods it selects) that stay on their current revision." })),
        selector: Type.Optional(LabelSelectorSchema),
        maxUnavailable: Type.Optional(IntOrString({
          description: "Pods of one workload (a Deployment, StatefulSet, DaemonSet, Job, or the namespace's pods without a controller) that the rollout may make unavailable at once: a count or a percentage of the workload's matched pods; 1 when unset. CollaSet pods follow their CollaSet's maxUnavailable.",
        })),
        ...rollingUpdateExtra,
      })),
      recreatePolicy: Type.Optional(StringEnum(RECREATE_POLICIES, {
        description: "For pods not owned by a CollaSet whose change cannot be made in place (more than images and metadata): Never (unset) reports them outdated and leaves them running; Evict evicts them through the Eviction API, PodDisruptionBudgets holding, so their owner recreates them with the updated revision.",
      })),
      newPodRevision: Type.Optional(StringEnum(NEW_POD_REVISIONS, {
        description: "Which revision a pod created during a rollout gets where the partition leaves the choice: Updated (unset) or Current. The partition's count holds either way.",
      })),
    })),
    historyLimit: Type.Optional(Type.Integer({ minimum: 0, default: DEFAULT_HISTORY_LIMIT, description: "ControllerRevisions kept; 0 means the default, 20." })),
    disablePodDetail: Type.Optional(Type.Boolean()),
    template: Type.Optional(PodDecorationTemplateSchema),
  };
}

export const PodDecorationSpecSchema = Type.Object(decorationSpecProperties({}));
export type PodDecorationSpec = Static<typeof PodDecorationSpecSchema>;

/** Why a pod of another owner than a CollaSet does not move to the revision it should have. */
export const BLOCKED_REASONS = ["NeedsRecreation", "EvictionRefused", "RenderError", "LifecycleStuck", "UpdateRefused", "Paused", "InPlaceOnly"] as const;

function WorkloadStatusSchema() {
  return Type.Object({
    namespace: Type.Optional(Type.String({ description: "A ClusterPodDecoration's: the workload's namespace." })),
    kind: Type.String({ description: "Deployment, StatefulSet, DaemonSet, Job, another controller's kind, or Pod for the pods without a controller." }),
    name: Type.String({ description: "The workload's name; for a pod without a controller (a workload of its own), the pod's." }),
    matchedPods: Type.Integer(),
    updatedPods: Type.Integer(),
    /** Should move to the updated revision and have not yet (held-back pods are not outdated). */
    outdatedPods: Type.Integer(),
    blockedPods: Type.Integer(),
    /** The first blocked pods (at most 10) and why. */
    blocked: Type.Optional(Type.Array(Type.Object({
      pod: Type.String(),
      reason: StringEnum(BLOCKED_REASONS),
      message: Type.String(),
    }))),
  });
}

export const PodDecorationStatusSchema = Type.Object({
  observedGeneration: Type.Optional(Type.Integer()),
  currentRevision: Type.Optional(Type.String()),
  updatedRevision: Type.Optional(Type.String()),
  collisionCount: Type.Optional(Type.Integer()),
  matchedPods: Type.Optional(Type.Integer()),
  injectedPods: Type.Optional(Type.Integer()),
  updatedPods: Type.Optional(Type.Integer()),
  updatedReadyPods: Type.Optional(Type.Integer()),
  updatedAvailablePods: Type.Optional(Type.Integer()),
  details: Type.Optional(Type.Array(Type.Object({
    collaSet: Type.Optional(Type.String()),
    affectedReplicas: Type.Optional(Type.Integer()),
    pods: Type.Optional(Type.Array(Type.Object({
      name: Type.Optional(Type.String()),
      revision: Type.Optional(Type.String()),
      escaped: Type.Optional(Type.Boolean()),
    }))),
  }))),
  /** CollaSets left out of details, to keep the status far below etcd's object size limit. */
  omittedDetails: Type.Optional(Type.Integer({ description: "How many CollaSets details leaves out to keep the status small (etcd stores at most 1.5 MiB per object); their pods are counted above." })),
  workloads: Type.Optional(Type.Array(WorkloadStatusSchema(), {
    description: "The rollout to pods not owned by a CollaSet, per workload (CollaSet pods are in details).",
  })),
  omittedWorkloads: Type.Optional(Type.Integer({ description: "How many workloads status.workloads leaves out to keep the status small (etcd stores at most 1.5 MiB per object); their pods are counted above." })),
  conditions: Type.Optional(Type.Array(ConditionSchema)),
});
export type PodDecorationStatus = Static<typeof PodDecorationStatusSchema>;

export const PodDecorationSchema = kindObjectSchema(PodDecorationSpecSchema, PodDecorationStatusSchema);
export type PodDecoration = Static<typeof PodDecorationSchema>;

/**
 * Fills in every schema default, with null fields read as absent (as the API server reads
 * them); pure (the input is not touched) and tolerant of malformed input.
 */
export function defaultPodDecoration(pd: PodDecoration): PodDecoration {
  const defaulted = Value.Default(PodDecorationSchema, withoutNullFields(pd)) as PodDecoration | null;
  // The defaults a schema cannot say (KusionStack's webhook writes them the same way).
  const spec: unknown = isObject(defaulted) ? defaulted.spec : undefined;
  if (!isObject(spec)) return defaulted as PodDecoration;
  if (spec.historyLimit === 0) spec.historyLimit = DEFAULT_HISTORY_LIMIT;
  const patches: unknown = isObject(spec.template) ? spec.template.primaryContainers : undefined;
  if (Array.isArray(patches)) {
    for (const patch of patches) if (isObject(patch) && patch.targetPolicy === undefined) patch.targetPolicy = primaryTargetPolicy(patch);
  }
  return defaulted as PodDecoration;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * The containers a primaryContainers entry patches: its targetPolicy, else ByName when it
 * names a container and All when it does not. KusionStack defaults to All even with a name;
 * an admission warning says so (see poddecoration-warnings.ts).
 */
export function primaryTargetPolicy(patch: { targetPolicy?: unknown; name?: unknown }): PrimaryContainerTargetPolicy {
  if (patch.targetPolicy !== undefined) return patch.targetPolicy as PrimaryContainerTargetPolicy;
  return typeof patch.name === "string" && patch.name !== "" ? "ByName" : "All";
}

export type PrimaryContainerTargetPolicy = (typeof PRIMARY_CONTAINER_TARGET_POLICIES)[number];

/** ControllerRevisions to keep: `historyLimit`, where 0 (or unset) means the default, as in KusionStack. */
export function historyLimitOf(pd: Pick<PodDecoration, "spec">): number {
  const limit = pd.spec.historyLimit;
  return limit === undefined || limit === 0 ? DEFAULT_HISTORY_LIMIT : limit;
}

export function decorationGroup(pd: Pick<PodDecoration, "spec">): string {
  return pd.spec.injectStrategy?.group ?? "";
}

/**
 * `injectStrategy.weight`, else KusionStack's `spec.weight`, else 0. Resolved on read rather
 * than written by defaulting: a persisted default would freeze the alias, so a later change
 * of `spec.weight` would silently stop counting.
 */
export function decorationWeight(pd: Pick<PodDecoration, "spec">): number {
  return pd.spec.injectStrategy?.weight ?? pd.spec.weight ?? 0;
}

const podDecorationValidator = kindValidator({ kind: POD_DECORATION_KIND, specSchema: PodDecorationSpecSchema, validateSpec: validatePodDecorationSpec });

/**
 * Structural validation (DESIGN §2): the schema, then the rules a schema cannot say. Missing
 * fields that have defaults are treated as their defaults, so this works before or after
 * `defaultPodDecoration`, and null fields are absent ones. Status is not validated: the API
 * server ignores it on writes.
 */
export function validatePodDecoration(value: unknown): FieldError[] {
  return podDecorationValidator(value);
}

/** The rules of a PodDecoration's spec a schema cannot say; a ClusterPodDecoration's spec shares them. */
export function validatePodDecorationSpec(spec: PodDecorationSpec): FieldError[] {
  // No selector is valid: it selects no pod (a warning says so).
  const errors = spec.selector === undefined ? [] : validateLabelSelector(spec.selector, "spec.selector");
  const rollingUpdate = spec.updateStrategy?.rollingUpdate;
  // partition together with selector is valid: the selector picks the candidates, the partition holds some back.
  if (rollingUpdate?.selector !== undefined) errors.push(...validateLabelSelector(rollingUpdate.selector, "spec.updateStrategy.rollingUpdate.selector"));
  if (rollingUpdate?.maxUnavailable !== undefined) errors.push(...validateMaxUnavailable(rollingUpdate.maxUnavailable, "spec.updateStrategy.rollingUpdate.maxUnavailable"));
  if (spec.template !== undefined) errors.push(...validateTemplate(spec.template, "spec.template"));
  return errors;
}

function validateTemplate(template: PodDecorationTemplate, path: string): FieldError[] {
  const errors: FieldError[] = [];
  (template.metadata ?? []).forEach((patch, index) => errors.push(...validateMetadataPatch(patch, indexPath(childPath(path, "metadata"), index))));
  errors.push(...reservedKeyErrors(template.metadata ?? [], childPath(path, "metadata")));

  const initContainers = template.initContainers ?? [];
  const containers = template.containers ?? [];
  // Init and regular containers share one namespace of names in a pod.
  const initPaths = initContainers.map((container, index) => ({ container, path: indexPath(childPath(path, "initContainers"), index) }));
  const containerPaths = containers.map((container, index) => ({ container, path: indexPath(childPath(path, "containers"), index) }));
  errors.push(...validateContainers([...initPaths, ...containerPaths]));
  // What else Kubernetes' pod validation refuses in a container (DESIGN §10).
  for (const { container, path: containerPath } of initPaths) errors.push(...containerRules(container, containerPath, "init"));
  for (const { container, path: containerPath } of containerPaths) errors.push(...containerRules(container, containerPath, "container"));

  (template.primaryContainers ?? []).forEach((patch, index) => {
    const patchPath = indexPath(childPath(path, "primaryContainers"), index);
    if (primaryTargetPolicy(patch) === "ByName" && (patch.name === undefined || patch.name === "")) {
      errors.push(requiredError(childPath(patchPath, "name"), "required when targetPolicy is ByName"));
    }
    if (patch.image === "") errors.push(invalidError(childPath(patchPath, "image"), patch.image, "must not be empty when set"));
    errors.push(...validateEnv(patch.env ?? [], childPath(patchPath, "env")));
    errors.push(...validateVolumeMounts(patch.volumeMounts ?? [], childPath(patchPath, "volumeMounts")));
    errors.push(...primaryPatchRules(patch.env ?? [], patch.volumeMounts ?? [], patchPath));
  });

  errors.push(...validateVolumes(template.volumes ?? [], childPath(path, "volumes")));
  (template.volumes ?? []).forEach((volume, index) => errors.push(...volumeSourceRules(volume, indexPath(childPath(path, "volumes"), index))));
  if (template.affinity?.overrideAffinity !== undefined) errors.push(...overrideAffinityRules(template.affinity.overrideAffinity, childPath(path, "affinity.overrideAffinity")));
  (template.affinity?.nodeSelectorTerms ?? []).forEach((term, index) => {
    const termPath = indexPath(childPath(path, "affinity.nodeSelectorTerms"), index);
    errors.push(...validateNodeSelectorTerm(term, termPath));
    errors.push(...nodeSelectorTermRules(term, termPath, { strictValues: true, operators: false }));
  });
  errors.push(...validateTolerations(template.tolerations ?? [], childPath(path, "tolerations")));
  if (template.runtimeClassName !== undefined) {
    for (const reason of dns1123SubdomainErrors(template.runtimeClassName)) {
      errors.push(invalidError(childPath(path, "runtimeClassName"), template.runtimeClassName, reason));
    }
  }
  return errors;
}

function validateMetadataPatch(patch: MetadataPatch, path: string): FieldError[] {
  const errors: FieldError[] = [];
  const policy = patch.patchPolicy ?? "Retain";
  if (policy === "MergePatchJson" && patch.labels !== undefined && Object.keys(patch.labels).length > 0) {
    errors.push(forbiddenError(childPath(path, "labels"), "patchPolicy MergePatchJson applies to annotations only"));
  } else {
    errors.push(...validateLabels(patch.labels ?? {}, childPath(path, "labels")));
  }
  const annotationsPath = childPath(path, "annotations");
  errors.push(...validateAnnotationKeys(patch.annotations ?? {}, annotationsPath));
  // The pod's annotations together must fit too: checked when rendering.
  if (annotationsTooLong(patch.annotations ?? {})) errors.push(tooLongError(annotationsPath, ANNOTATIONS_SIZE_LIMIT));
  if (policy === "MergePatchJson") {
    // A merge patch (RFC 7386) is any JSON value; text that is not JSON patches nothing.
    for (const [key, value] of Object.entries(patch.annotations ?? {})) {
      if (!isJsonText(value)) errors.push(invalidError(keyPath(annotationsPath, key), value, "must be JSON with patchPolicy MergePatchJson"));
    }
  }
  return errors;
}

function isJsonText(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}
