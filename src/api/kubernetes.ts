// The Kubernetes core shapes PodDecoration and CollaSet embed, declared as far as this project
// reads or validates them. Every partially declared object keeps its undeclared fields
// (`x-kubernetes-preserve-unknown-fields`), so a container's probes or a volume's source pass
// through the API server and the engine untouched; the full upstream schemas would be large
// and would tie the CRDs to one Kubernetes version.
import Type, { type Static } from "typebox";
import { Dns1123Label, LabelMap, OpenObject, OpenObjectOf, StringEnum, StringMap } from "./openapi.ts";

/** The ObjectMeta fields this project reads; in CRDs the API server owns `metadata`'s schema. */
export const ObjectMetaSchema = OpenObjectOf(
  {
    name: Type.Optional(Type.String()),
    generateName: Type.Optional(Type.String()),
    namespace: Type.Optional(Type.String()),
    uid: Type.Optional(Type.String()),
    resourceVersion: Type.Optional(Type.String()),
    generation: Type.Optional(Type.Integer()),
    creationTimestamp: Type.Optional(Type.String()),
    deletionTimestamp: Type.Optional(Type.String()),
    labels: Type.Optional(LabelMap()),
    annotations: Type.Optional(StringMap()),
    ownerReferences: Type.Optional(Type.Array(OpenObject())),
    finalizers: Type.Optional(Type.Array(Type.String())),
  },
);
export type ObjectMeta = Static<typeof ObjectMetaSchema>;

export const EnvVarSchema = Type.Object({
  name: Type.String(),
  value: Type.Optional(Type.String()),
  valueFrom: Type.Optional(OpenObject()),
});
export type EnvVar = Static<typeof EnvVarSchema>;

export const VolumeMountSchema = OpenObjectOf(
  {
    name: Type.String(),
    mountPath: Type.String(),
    readOnly: Type.Optional(Type.Boolean()),
    subPath: Type.Optional(Type.String()),
    subPathExpr: Type.Optional(Type.String()),
    mountPropagation: Type.Optional(Type.String()),
  },
);
export type VolumeMount = Static<typeof VolumeMountSchema>;

export const IMAGE_PULL_POLICIES = ["Always", "IfNotPresent", "Never"] as const;

export const ContainerProperties = {
  name: Dns1123Label(),
  image: Type.Optional(Type.String()),
  imagePullPolicy: Type.Optional(StringEnum(IMAGE_PULL_POLICIES)),
  command: Type.Optional(Type.Array(Type.String())),
  args: Type.Optional(Type.Array(Type.String())),
  workingDir: Type.Optional(Type.String()),
  env: Type.Optional(Type.Array(EnvVarSchema)),
  envFrom: Type.Optional(Type.Array(OpenObject())),
  volumeMounts: Type.Optional(Type.Array(VolumeMountSchema)),
  ports: Type.Optional(Type.Array(OpenObject())),
  resources: Type.Optional(OpenObject()),
  restartPolicy: Type.Optional(Type.String()),
};
export const ContainerSchema = OpenObjectOf(ContainerProperties);
export type Container = Static<typeof ContainerSchema>;

/** A volume: its name, and whichever single source it has (kept as is). */
export const VolumeSchema = OpenObjectOf({ name: Dns1123Label() });
export type Volume = Static<typeof VolumeSchema>;

// The empty string is what Go clients send for an unset operator or effect ("Equal", "all effects").
export const TOLERATION_OPERATORS = ["", "Exists", "Equal"] as const;
export const TAINT_EFFECTS = ["", "NoSchedule", "PreferNoSchedule", "NoExecute"] as const;

export const TolerationSchema = Type.Object({
  key: Type.Optional(Type.String()),
  operator: Type.Optional(StringEnum(TOLERATION_OPERATORS)),
  value: Type.Optional(Type.String()),
  effect: Type.Optional(StringEnum(TAINT_EFFECTS)),
  tolerationSeconds: Type.Optional(Type.Integer()),
});
export type Toleration = Static<typeof TolerationSchema>;

export const NODE_SELECTOR_OPERATORS = ["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"] as const;

export const NodeSelectorRequirementSchema = Type.Object({
  key: Type.String(),
  operator: StringEnum(NODE_SELECTOR_OPERATORS),
  values: Type.Optional(Type.Array(Type.String())),
});
export type NodeSelectorRequirement = Static<typeof NodeSelectorRequirementSchema>;

export const NodeSelectorTermSchema = Type.Object(
  {
    matchExpressions: Type.Optional(Type.Array(NodeSelectorRequirementSchema)),
    matchFields: Type.Optional(Type.Array(NodeSelectorRequirementSchema)),
  },
  { "x-kubernetes-map-type": "atomic" },
);
export type NodeSelectorTerm = Static<typeof NodeSelectorTermSchema>;

export const NodeSelectorSchema = Type.Object(
  { nodeSelectorTerms: Type.Array(NodeSelectorTermSchema) },
  { "x-kubernetes-map-type": "atomic" },
);

export const NodeAffinitySchema = OpenObjectOf(
  {
    requiredDuringSchedulingIgnoredDuringExecution: Type.Optional(NodeSelectorSchema),
    preferredDuringSchedulingIgnoredDuringExecution: Type.Optional(Type.Array(OpenObject())),
  },
);
export type NodeAffinity = Static<typeof NodeAffinitySchema>;

export const AffinitySchema = Type.Object({
  nodeAffinity: Type.Optional(NodeAffinitySchema),
  podAffinity: Type.Optional(OpenObject()),
  podAntiAffinity: Type.Optional(OpenObject()),
});
export type Affinity = Static<typeof AffinitySchema>;

/** metav1.Condition, as both kinds report it in status. */
export const ConditionSchema = Type.Object({
  type: Type.String(),
  status: StringEnum(["True", "False", "Unknown"]),
  observedGeneration: Type.Optional(Type.Integer()),
  lastTransitionTime: Type.Optional(Type.String({ format: "date-time" })),
  reason: Type.Optional(Type.String()),
  message: Type.Optional(Type.String()),
});
export type Condition = Static<typeof ConditionSchema>;

/** The pod spec fields the engine renders into; everything else is kept. */
export const PodSpecSchema = OpenObjectOf(
  {
    initContainers: Type.Optional(Type.Array(ContainerSchema)),
    containers: Type.Array(ContainerSchema),
    volumes: Type.Optional(Type.Array(VolumeSchema)),
    affinity: Type.Optional(AffinitySchema),
    tolerations: Type.Optional(Type.Array(TolerationSchema)),
    runtimeClassName: Type.Optional(Type.String()),
    nodeSelector: Type.Optional(StringMap()),
  },
);
export type PodSpec = Static<typeof PodSpecSchema>;

export const PodTemplateSpecSchema = OpenObjectOf({
  metadata: Type.Optional(ObjectMetaSchema),
  spec: Type.Optional(PodSpecSchema),
});
export type PodTemplateSpec = Static<typeof PodTemplateSpecSchema>;
