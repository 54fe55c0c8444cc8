// CustomResourceDefinitions generated from the kinds' schemas (used by `pod-decorator crds`
// and `make crds`; the committed config/crd/*.yaml must equal this output). Kubernetes
// requires structural schemas, so the conversion rejects any keyword it cannot vouch for
// rather than emitting a CRD the API server would refuse.
import type { TSchema } from "typebox";
import { COLLASET_PLURAL, CollaSetSpecSchema, CollaSetStatusSchema } from "./collaset.ts";
import { CLUSTER_POD_DECORATION_KIND, COLLASET_KIND, GROUP, OPERATIONJOB_KIND, OWN_GROUP, POD_DECORATION_KIND, PODTRANSITIONRULE_KIND, RESOURCE_CONTEXT_KIND, VERSION } from "./group.ts";
import { CLUSTER_POD_DECORATION_PLURAL, ClusterPodDecorationSpecSchema, ClusterPodDecorationStatusSchema } from "./cluster-poddecoration.ts";
import { OPERATIONJOB_PLURAL, OperationJobSpecSchema, OperationJobStatusSchema } from "./operationjob.ts";
import { PODTRANSITIONRULE_PLURAL, PodTransitionRuleSpecSchema, PodTransitionRuleStatusSchema } from "./podtransitionrule.ts";
import { RESOURCE_CONTEXT_PLURAL, ResourceContextSpecSchema } from "./resource-context.ts";
import { POD_DECORATION_PLURAL, PodDecorationSpecSchema, PodDecorationStatusSchema } from "./poddecoration.ts";

/** An OpenAPI v3 schema as CRDs accept it (apiextensions.k8s.io/v1 JSONSchemaProps). */
export type JsonSchemaProps = Record<string, unknown>;

export interface PrinterColumn {
  name: string;
  type: "integer" | "string" | "date" | "boolean" | "number";
  jsonPath: string;
  description?: string;
}

export interface CustomResourceDefinition {
  apiVersion: "apiextensions.k8s.io/v1";
  kind: "CustomResourceDefinition";
  metadata: { name: string };
  spec: {
    group: string;
    names: { kind: string; listKind: string; plural: string; singular: string; shortNames: string[] };
    scope: "Namespaced" | "Cluster";
    versions: {
      name: string;
      served: boolean;
      storage: boolean;
      schema: { openAPIV3Schema: JsonSchemaProps };
      subresources?: { status: Record<string, never>; scale?: { specReplicasPath: string; statusReplicasPath: string } };
      additionalPrinterColumns: PrinterColumn[];
    }[];
  };
}

const ALLOWED_KEYWORDS = new Set([
  "type", "format", "description", "properties", "required", "items", "additionalProperties", "enum", "default",
  "minimum", "maximum", "minLength", "maxLength", "minItems", "maxItems", "pattern", "nullable", "anyOf",
  "x-kubernetes-preserve-unknown-fields", "x-kubernetes-int-or-string", "x-kubernetes-map-type",
  "x-kubernetes-list-type", "x-kubernetes-list-map-keys", "x-kubernetes-validations",
]);

/** A TypeBox schema as a structural CRD schema; throws on keywords a CRD schema may not carry. */
export function toStructuralSchema(schema: TSchema, path = "<root>"): JsonSchemaProps {
  // JSON round trip: drops TypeBox's non-enumerable markers and shares no objects with the schema.
  const plain = JSON.parse(JSON.stringify(schema)) as JsonSchemaProps;
  return convert(plain, path);
}

function convert(node: JsonSchemaProps, path: string): JsonSchemaProps {
  const result: JsonSchemaProps = {};
  for (const [keyword, value] of Object.entries(node)) {
    if (!ALLOWED_KEYWORDS.has(keyword)) throw new Error(`${path}: keyword ${keyword} is not allowed in a structural CRD schema`);
    switch (keyword) {
      case "properties":
        // The API server drops an empty `properties`; leaving it out keeps generated == served.
        if (Object.keys(value as object).length === 0) break;
        result.properties = Object.fromEntries(
          Object.entries(value as Record<string, JsonSchemaProps>).map(([name, child]) => [name, convert(child, `${path}.${name}`)]),
        );
        break;
      case "items":
        result.items = convert(value as JsonSchemaProps, `${path}[]`);
        break;
      case "additionalProperties":
        result.additionalProperties = typeof value === "object" ? convert(value as JsonSchemaProps, `${path}{}`) : value;
        break;
      case "required":
        // TypeBox emits `required: []` for all-optional objects; Kubernetes prints nothing for it.
        if ((value as string[]).length > 0) result.required = value;
        break;
      default:
        result[keyword] = value;
    }
  }
  const isIntOrString = result["x-kubernetes-int-or-string"] === true;
  const preserves = result["x-kubernetes-preserve-unknown-fields"] === true;
  if (result.type === undefined && !isIntOrString && !preserves) throw new Error(`${path}: a structural schema needs a type`);
  if (result.anyOf !== undefined && !isIntOrString) throw new Error(`${path}: anyOf is only allowed for int-or-string`);
  return result;
}

/** `status` undefined: a kind without status (ResourceContext, as kuperator serves it). */
function rootSchema(description: string, spec: TSchema, status: TSchema | undefined, kind: string): JsonSchemaProps {
  return {
    type: "object",
    description,
    properties: {
      apiVersion: { type: "string", description: "APIVersion defines the versioned schema of this representation of an object." },
      kind: { type: "string", description: "Kind is a string value representing the REST resource this object represents." },
      // The API server owns metadata's schema; a CRD may only constrain name and generateName.
      metadata: { type: "object" },
      spec: toStructuralSchema(spec, `${kind}.spec`),
      ...(status === undefined ? {} : { status: toStructuralSchema(status, `${kind}.status`) }),
    },
    required: ["spec"],
  };
}

const AGE: PrinterColumn = { name: "AGE", type: "date", jsonPath: ".metadata.creationTimestamp" };

/** What sets one of our kinds' CRD apart; the rest is the same for all (one version). */
interface KindDefinition {
  kind: string;
  /** Default KusionStack's group, namespaced. */
  group?: string;
  scope?: "Namespaced" | "Cluster";
  plural: string;
  singular: string;
  shortName: string;
  description: string;
  spec: TSchema;
  /** Absent: a kind without status (ResourceContext). */
  status?: TSchema;
  scale?: boolean;
  columns: PrinterColumn[];
}

function definition(kind: KindDefinition): CustomResourceDefinition {
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: `${kind.plural}.${kind.group ?? GROUP}` },
    spec: {
      group: kind.group ?? GROUP,
      names: { kind: kind.kind, listKind: `${kind.kind}List`, plural: kind.plural, singular: kind.singular, shortNames: [kind.shortName] },
      scope: kind.scope ?? "Namespaced",
      versions: [{
        name: VERSION,
        served: true,
        storage: true,
        schema: { openAPIV3Schema: rootSchema(kind.description, kind.spec, kind.status, kind.kind) },
        ...(kind.status === undefined ? {} : { subresources: { status: {}, ...(kind.scale === true ? { scale: { specReplicasPath: ".spec.replicas", statusReplicasPath: ".status.replicas" } } : {}) } }),
        additionalPrinterColumns: [...kind.columns, AGE],
      }],
    },
  };
}

export function podDecorationDefinition(): CustomResourceDefinition {
  return definition({
    kind: POD_DECORATION_KIND,
    plural: POD_DECORATION_PLURAL,
    singular: "poddecoration",
    shortName: "pd",
    description: "PodDecoration renders sidecars, init containers, env, volumes, scheduling constraints and metadata into the pods its selector matches.",
    spec: PodDecorationSpecSchema,
    status: PodDecorationStatusSchema,
    columns: [
      { name: "MATCHED", type: "integer", jsonPath: ".status.matchedPods", description: "Pods the selector matches." },
      { name: "INJECTED", type: "integer", jsonPath: ".status.injectedPods", description: "Pods carrying any revision of this decoration." },
      { name: "UPDATED", type: "integer", jsonPath: ".status.updatedPods", description: "Pods carrying the updated revision." },
      { name: "UPDATED_READY", type: "integer", jsonPath: ".status.updatedReadyPods", description: "Ready pods carrying the updated revision." },
      { name: "CURRENT_REVISION", type: "string", jsonPath: ".status.currentRevision", description: "The revision every matched pod had before the current rollout." },
      { name: "UPDATED_REVISION", type: "string", jsonPath: ".status.updatedRevision", description: "The revision of the current spec." },
    ],
  });
}

export function collaSetDefinition(): CustomResourceDefinition {
  return definition({
    kind: COLLASET_KIND,
    plural: COLLASET_PLURAL,
    singular: "collaset",
    shortName: "cls",
    description: "CollaSet runs replicas of a pod template with stable instance ids and updates them in place where Kubernetes allows it.",
    spec: CollaSetSpecSchema,
    status: CollaSetStatusSchema,
    scale: true,
    columns: [
      { name: "DESIRED", type: "integer", jsonPath: ".spec.replicas", description: "The desired number of pods." },
      { name: "CURRENT", type: "integer", jsonPath: ".status.replicas", description: "The number of pods." },
      { name: "UPDATED", type: "integer", jsonPath: ".status.updatedReplicas", description: "Pods on the updated revision." },
      { name: "UPDATED_READY", type: "integer", jsonPath: ".status.updatedReadyReplicas", description: "Ready pods on the updated revision." },
      { name: "AVAILABLE", type: "integer", jsonPath: ".status.availableReplicas", description: "Available pods." },
      { name: "CURRENT_REVISION", type: "string", jsonPath: ".status.currentRevision", description: "The current revision." },
      { name: "UPDATED_REVISION", type: "string", jsonPath: ".status.updatedRevision", description: "The updated revision." },
    ],
  });
}

export function clusterPodDecorationDefinition(): CustomResourceDefinition {
  return definition({
    kind: CLUSTER_POD_DECORATION_KIND,
    group: OWN_GROUP,
    scope: "Cluster",
    plural: CLUSTER_POD_DECORATION_PLURAL,
    singular: "clusterpoddecoration",
    shortName: "cpd",
    description: "ClusterPodDecoration renders into the pods of every namespace its namespaceSelector selects what a PodDecoration renders into the pods of its own; owned by the platform team, out of every namespace's reach.",
    spec: ClusterPodDecorationSpecSchema,
    status: ClusterPodDecorationStatusSchema,
    columns: [
      { name: "NAMESPACES", type: "integer", jsonPath: ".status.selectedNamespaces", description: "Namespaces its namespaceSelector selects." },
      { name: "MATCHED", type: "integer", jsonPath: ".status.matchedPods", description: "Pods it selects, over every selected namespace." },
      { name: "UPDATED", type: "integer", jsonPath: ".status.updatedPods", description: "Pods running the updated revision." },
      { name: "UPDATED_READY", type: "integer", jsonPath: ".status.updatedReadyPods", description: "Ready pods running the updated revision." },
      { name: "UPDATED_REVISION", type: "string", jsonPath: ".status.updatedRevision", description: "The revision of the current spec." },
    ],
  });
}

/** kuperator's ResourceContext, served here so its readers find the instance ids where kuperator records them. */
export function resourceContextDefinition(): CustomResourceDefinition {
  return definition({
    kind: RESOURCE_CONTEXT_KIND,
    plural: RESOURCE_CONTEXT_PLURAL,
    singular: "resourcecontext",
    shortName: "rc",
    description: "ResourceContext records the instance ids of CollaSets' pods (one entry per id, its owner under data.Owner); CollaSets naming it in scaleStrategy.context take ids from one pool.",
    spec: ResourceContextSpecSchema,
    columns: [],
  });
}

/** kuperator's PodTransitionRule: rules gating the PodOpsLifecycle stages of the pods they select. */
export function podTransitionRuleDefinition(): CustomResourceDefinition {
  return definition({
    kind: PODTRANSITIONRULE_KIND,
    plural: PODTRANSITIONRULE_PLURAL,
    singular: "podtransitionrule",
    shortName: "ptr",
    description: "PodTransitionRule gates the PodOpsLifecycle stages (PreCheck, PostCheck) of the pods its selector picks: an availability budget across all of them, a label check, a webhook.",
    spec: PodTransitionRuleSpecSchema,
    status: PodTransitionRuleStatusSchema,
    columns: [
      { name: "RULES", type: "string", jsonPath: ".spec.rules[*].name", description: "The rules, by name." },
      { name: "UPDATED", type: "date", jsonPath: ".status.updateTime", description: "When the status was last written." },
    ],
  });
}

/** kuperator's OperationJob: an operation (Replace) on pods named in its namespace. */
export function operationJobDefinition(): CustomResourceDefinition {
  return definition({
    kind: OPERATIONJOB_KIND,
    plural: OPERATIONJOB_PLURAL,
    singular: "operationjob",
    shortName: "opj",
    description: "OperationJob operates on pods named in its namespace (Replace: a CollaSet's pod gets a new pod first, then goes), by partition, within a deadline, deleted a while after it finished.",
    spec: OperationJobSpecSchema,
    status: OperationJobStatusSchema,
    columns: [
      { name: "PROGRESS", type: "string", jsonPath: ".status.progress", description: "Pending, Processing, Succeeded or Failed." },
      { name: "ACTION", type: "string", jsonPath: ".spec.action", description: "The operation." },
      { name: "SUCCEEDED", type: "integer", jsonPath: ".status.succeededPodCount", description: "Targets done." },
      { name: "FAILED", type: "integer", jsonPath: ".status.failedPodCount", description: "Targets that failed." },
      { name: "TOTAL", type: "integer", jsonPath: ".status.totalPodCount", description: "Targets." },
    ],
  });
}

/** Every CRD this project serves, in a stable order. */
export function customResourceDefinitions(): CustomResourceDefinition[] {
  return [collaSetDefinition(), operationJobDefinition(), podDecorationDefinition(), podTransitionRuleDefinition(), resourceContextDefinition(), clusterPodDecorationDefinition()];
}
