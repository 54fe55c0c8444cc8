// ClusterPodDecoration (pod-decorator.io/v1alpha1, cluster-scoped, DESIGN §12), defined once as
// PodDecoration is: the schema is the type, the CRD's openAPIV3Schema and the validator. Its spec
// is a PodDecoration's spec plus the namespaces it decorates (`namespaceSelector`, required) and
// a namespace canary for its rollout (`updateStrategy.rollingUpdate.namespaceSelector`); its status
// a PodDecoration's plus a bounded per-namespace summary. The engine and the controllers take one
// as a PodDecoration of kind ClusterPodDecoration (decoration-kind.ts tells them apart).
import Type, { type Static } from "typebox";
import { Value } from "typebox/value";
import type { FieldError } from "./field-errors.ts";
import { CLUSTER_POD_DECORATION_KIND, OWN_API_VERSION } from "./group.ts";
import { kindObjectSchema, kindValidator } from "./kind-envelope.ts";
import { type LabelSelector, LabelSelectorSchema, validateLabelSelector } from "./label-selector.ts";
import { withoutNullFields } from "./null-fields.ts";
import { decorationSpecProperties, defaultPodDecoration, type PodDecoration, PodDecorationStatusSchema, validatePodDecorationSpec } from "./poddecoration.ts";

export const CLUSTER_POD_DECORATION_PLURAL = "clusterpoddecorations";

export const ClusterPodDecorationSpecSchema = Type.Object({
  ...decorationSpecProperties({
    namespaceSelector: Type.Optional(Type.Unsafe<LabelSelector>({
      ...LabelSelectorSchema,
      description: "The namespace canary: only pods in namespaces it selects move to the updated revision; the others keep what they have (with partition: the partition holds back that many of them).",
    })),
  }),
  namespaceSelector: Type.Unsafe<LabelSelector>({
    ...LabelSelectorSchema,
    description: "Namespaces whose pods it decorates, by their labels; {} selects every namespace the pod webhook is called for.",
  }),
});
export type ClusterPodDecorationSpec = Static<typeof ClusterPodDecorationSpecSchema>;

/** Per namespace of the fleet: its pods as status counts them. */
export const NAMESPACES_LISTED_BUDGET_BYTES = 64 * 1024;

export const ClusterPodDecorationStatusSchema = Type.Object({
  ...PodDecorationStatusSchema.properties,
  namespaces: Type.Optional(Type.Array(Type.Object({
    name: Type.String(),
    matchedPods: Type.Integer(),
    updatedPods: Type.Integer(),
    /** Pods of a namespace no longer selected that still carry the decoration (they keep it). */
    keptPods: Type.Optional(Type.Integer()),
  }), { description: "Per namespace with matched or kept pods, most outdated first, then most kept, within 64 KiB of JSON." })),
  omittedNamespaces: Type.Optional(Type.Integer({ description: "How many namespaces status.namespaces leaves out to keep the status small; their pods are counted above." })),
  selectedNamespaces: Type.Optional(Type.Integer({ description: "Namespaces its namespaceSelector selects now." })),
});
export type ClusterPodDecorationStatus = Static<typeof ClusterPodDecorationStatusSchema>;

export const ClusterPodDecorationSchema = kindObjectSchema(ClusterPodDecorationSpecSchema, ClusterPodDecorationStatusSchema);
export type ClusterPodDecoration = Static<typeof ClusterPodDecorationSchema>;

/** Its schema defaults and a PodDecoration's (null fields read as absent); pure. */
export function defaultClusterPodDecoration(cpd: ClusterPodDecoration): ClusterPodDecoration {
  const own = Value.Default(ClusterPodDecorationSchema, withoutNullFields(cpd)) as ClusterPodDecoration;
  if (typeof own !== "object" || own === null || typeof own.spec !== "object" || own.spec === null) return own;
  // The PodDecoration defaults a schema cannot say (historyLimit 0, primary-container targets).
  const asDecoration = defaultPodDecoration({ ...own, kind: "PodDecoration" });
  return { ...own, spec: { ...own.spec, ...asDecoration.spec } };
}

const clusterPodDecorationValidator = kindValidator<ClusterPodDecorationSpec>({
  kind: CLUSTER_POD_DECORATION_KIND,
  apiVersion: OWN_API_VERSION,
  specSchema: ClusterPodDecorationSpecSchema,
  validateSpec: (spec) => {
    const errors: FieldError[] = [...validateLabelSelector(spec.namespaceSelector, "spec.namespaceSelector"), ...validatePodDecorationSpec(spec)];
    const canary = spec.updateStrategy?.rollingUpdate?.namespaceSelector;
    if (canary !== undefined) errors.push(...validateLabelSelector(canary, "spec.updateStrategy.rollingUpdate.namespaceSelector"));
    return errors;
  },
});

/** Structural validation, as validatePodDecoration's, with the namespace selectors; paths like spec.namespaceSelector.matchLabels. */
export function validateClusterPodDecoration(value: unknown): FieldError[] {
  return clusterPodDecorationValidator(value);
}

/**
 * A ClusterPodDecoration as the engine and the controllers take it in one namespace: a decoration
 * of kind ClusterPodDecoration whose metadata.namespace is that namespace.
 */
export function asSeenFrom(cpd: ClusterPodDecoration, namespace: string): PodDecoration {
  return Object.freeze({ ...cpd, metadata: Object.freeze({ ...cpd.metadata, namespace }) });
}
