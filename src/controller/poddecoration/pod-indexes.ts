// The indexes the PodDecoration controller reads through instead of scanning a namespace (at
// 100,000 pods and 1,000 decorations a decoration selecting one workload looks at that
// workload's pods only, and a pod event at the decorations that may select it). The pod cache:
// by label, for the pods a decoration's selector can match, and by recorded decoration, for the
// pods that carry one. The decoration cache: by one label requirement of the selector, for the
// decorations a pod's labels can satisfy. Both answers are supersets (the selector still
// decides); requirements an index cannot narrow (NotIn, DoesNotExist, an invalid selector) fall
// back to the narrowest one that can, else to the whole namespace. A valid selector of one
// requirement the label index answers (matchLabels of one pair, In, Exists) is answered
// exactly: its readers skip the selector (the widest decoration selects every pod).
import type { PodDecoration } from "../../api/poddecoration.ts";
import { recordedRevisions } from "../../decoration/recording.ts";
import { clusterKey, decorationKey, isClusterKey } from "../../decoration/decoration-kind.ts";
import { isValidSelector } from "../../decoration/selector.ts";
import type { KubeObject, Pod } from "../../kube/objects.ts";
import { namespaceIndex, type IndexBucket, type IndexFunc, type Lister } from "../runtime/cache.ts";

/** The pod cache's index by label: `namespace\0key` and `namespace\0key=value` for every label. */
export const podLabelIndex = "labels";

export const podLabelIndexFunc: IndexFunc<Pod> = (pod) => {
  const namespace = pod.metadata?.namespace ?? "";
  const values: string[] = [];
  for (const [key, value] of Object.entries(pod.metadata?.labels ?? {})) values.push(labelKey(namespace, key), labelPair(namespace, key, value));
  return values;
};

/**
 * The pod cache's index by the decorations a pod records: `namespace\0key` (decoration-kind.ts),
 * and for a ClusterPodDecoration also `\0key`, its pods in every namespace.
 */
export const podRecordedDecorationIndex = "recorded-decorations";

export const podRecordedDecorationIndexFunc: IndexFunc<Pod> = (pod) => {
  const namespace = pod.metadata?.namespace ?? "";
  const values: string[] = [];
  for (const key of recordedRevisions(pod)?.keys() ?? []) {
    values.push(recordingIndexValue(namespace, key));
    if (isClusterKey(key)) values.push(recordingIndexValue(undefined, key));
  }
  return values;
};

const labelKey = (namespace: string, key: string) => `${namespace}\0${key}`;
const labelPair = (namespace: string, key: string, value: string) => `${namespace}\0${key}=${value}`;
/** Filed under by a decoration whose selector no label index can narrow: any pod of the namespace may match. */
const anyLabels = (namespace: string) => `${namespace}\0`;

/** The decoration cache's index by one requirement of the selector: values of the pod label index, or anyLabels. */
export const decorationSelectorIndex = "selector-requirement";

export const decorationSelectorIndexFunc: IndexFunc<PodDecoration & KubeObject> = (decoration) => {
  const namespace = decoration.metadata.namespace ?? "";
  const { choices } = indexChoices(decoration.spec.selector, namespace);
  // A selected pod meets every requirement: filing under the one with the fewest values is enough.
  if (choices.length === 0) return [anyLabels(namespace)];
  return choices.reduce((fewest, values) => (values.length < fewest.length ? values : fewest));
};

/** Adds the selector index to the decoration cache, once (pod events map to decorations through it). */
export function indexDecorationsBySelector(decorations: Lister<PodDecoration & KubeObject>): void {
  if (!decorations.hasIndex(decorationSelectorIndex)) decorations.addIndex(decorationSelectorIndex, decorationSelectorIndexFunc);
}

/**
 * Every decoration of the pod's namespace whose selector may match the pod's labels (more is
 * possible, fewer never). Without the index, the namespace's decorations.
 */
export function decorationsSelectable<D extends PodDecoration & KubeObject>(decorations: Lister<D>, pod: Pod): D[] {
  const namespace = pod.metadata?.namespace ?? "";
  if (!decorations.hasIndex(decorationSelectorIndex)) return decorations.list(namespace);
  const selectable = new Set(decorations.byIndex(decorationSelectorIndex, anyLabels(namespace)));
  for (const [key, value] of Object.entries(pod.metadata?.labels ?? {})) {
    for (const indexValue of [labelKey(namespace, key), labelPair(namespace, key, value)]) {
      for (const decoration of decorations.byIndex(decorationSelectorIndex, indexValue)) selectable.add(decoration);
    }
  }
  return [...selectable];
}

/** Adds both indexes to the pod cache, once (the PodDecoration controller reads through them). */
export function indexPodsForDecorations(pods: Lister<Pod>): void {
  if (!pods.hasIndex(podLabelIndex)) pods.addIndex(podLabelIndex, podLabelIndexFunc);
  if (!pods.hasIndex(podRecordedDecorationIndex)) pods.addIndex(podRecordedDecorationIndex, podRecordedDecorationIndexFunc);
}

/** The pods of the decoration's namespace that record it. Without the index, found by a scan. */
export function podsRecording(pods: Lister<Pod>, decoration: PodDecoration): Pod[] {
  const namespace = decoration.metadata.namespace ?? "";
  const key = decorationKey(decoration);
  if (!pods.hasIndex(podRecordedDecorationIndex)) return scanForRecording(pods, namespace, key);
  return pods.byIndex(podRecordedDecorationIndex, recordingIndexValue(namespace, key));
}

/** The pods of every namespace that record a ClusterPodDecoration (by name). */
export function podsRecordingCluster(pods: Lister<Pod>, name: string): Pod[] {
  const key = clusterKey(name);
  if (!pods.hasIndex(podRecordedDecorationIndex)) return scanForRecording(pods, undefined, key);
  return pods.byIndex(podRecordedDecorationIndex, recordingIndexValue(undefined, key));
}

/**
 * The podRecordedDecorationIndex bucket of the pods recording decoration `key` (decoration-kind.ts)
 * in `namespace`, or in every namespace (a ClusterPodDecoration's): `{ bucket }` (undefined when
 * none does); undefined without the index (scanForRecording then).
 */
export function recordingBucket(pods: Lister<Pod>, namespace: string | undefined, key: string): { bucket: IndexBucket<Pod> | undefined } | undefined {
  if (!pods.hasIndex(podRecordedDecorationIndex)) return undefined;
  return { bucket: pods.indexBucket(podRecordedDecorationIndex, recordingIndexValue(namespace, key)) };
}

/** The pods recording decoration `key` in `namespace` (or any), found by a scan. */
export function scanForRecording(pods: Lister<Pod>, namespace: string | undefined, key: string): Pod[] {
  return pods.list(namespace).filter((pod) => recordedRevisions(pod)?.has(key) === true);
}

function recordingIndexValue(namespace: string | undefined, key: string): string {
  return namespace === undefined ? `\0${key}` : `${namespace}\0${key}`;
}

/**
 * Every pod of the decoration's namespace the selector may match (more is possible, fewer
 * never). Without the label index, the namespace's pods.
 */
export function selectablePods(pods: Lister<Pod>, decoration: PodDecoration): Pod[] {
  return podsForSelector(pods, decoration).pods;
}

/** The pods a decoration's selector may match, and whether it matches each of them. */
export interface SelectablePods {
  pods: Pod[];
  /** The label index answered the selector exactly: every pod is of the namespace and satisfies it. */
  selected: boolean;
}

/**
 * selectablePods, saying when the label index answered exactly (one requirement, valid
 * selector): the caller then checks the pods' own state only.
 */
export function podsForSelector(pods: Lister<Pod>, decoration: PodDecoration): SelectablePods {
  const namespace = decoration.metadata.namespace ?? "";
  if (!pods.hasIndex(podLabelIndex)) return { pods: pods.list(namespace), selected: false };
  const { choices, everyRequirement } = indexChoices(decoration.spec.selector, namespace);
  if (choices.length === 0) return { pods: pods.list(namespace), selected: false };
  // The narrowest requirement: each choice is a union of index values (In has several).
  let narrowest: Pod[] | undefined;
  for (const values of choices) {
    const selectable = values.length === 1 ? pods.byIndex(podLabelIndex, values[0]!) : [...new Set(values.flatMap((value) => pods.byIndex(podLabelIndex, value)))];
    if (narrowest === undefined || selectable.length < narrowest.length) narrowest = selectable;
    if (narrowest.length === 0) break;
  }
  const selected = everyRequirement && choices.length === 1 && isValidSelector(decoration.spec.selector);
  return { pods: narrowest ?? [], selected };
}

/**
 * The index bucket holding exactly the pods of the decoration's namespace its selector selects,
 * when one does: a valid selector of one requirement of one value (matchLabels of one pair, In of
 * one value, Exists) has its label index bucket, the empty selector its namespace's. `{ bucket }`
 * (undefined when no pod is filed there); undefined when no one bucket answers it (podsForSelector).
 */
export function exactSelection(pods: Lister<Pod>, decoration: PodDecoration): { bucket: IndexBucket<Pod> | undefined } | undefined {
  if (!pods.hasIndex(podLabelIndex) || !isValidSelector(decoration.spec.selector)) return undefined;
  const namespace = decoration.metadata.namespace ?? "";
  const { choices, everyRequirement } = indexChoices(decoration.spec.selector, namespace);
  if (!everyRequirement || choices.length > 1) return undefined;
  if (choices.length === 0) return { bucket: pods.indexBucket(namespaceIndex, namespace) };
  return choices[0]!.length === 1 ? { bucket: pods.indexBucket(podLabelIndex, choices[0]![0]!) } : undefined;
}

/**
 * For each requirement the index can answer, the index values whose union holds its pods
 * (none: no requirement can narrow), and whether those are all the selector's requirements.
 */
function indexChoices(selector: unknown, namespace: string): { choices: string[][]; everyRequirement: boolean } {
  if (typeof selector !== "object" || selector === null || Array.isArray(selector)) return { choices: [], everyRequirement: false };
  const { matchLabels, matchExpressions } = selector as { matchLabels?: unknown; matchExpressions?: unknown };
  const choices: string[][] = [];
  let everyRequirement = true;
  if (typeof matchLabels === "object" && matchLabels !== null && !Array.isArray(matchLabels)) {
    for (const [key, value] of Object.entries(matchLabels)) {
      if (typeof value === "string") choices.push([labelPair(namespace, key, value)]);
      else everyRequirement = false;
    }
  }
  if (Array.isArray(matchExpressions)) {
    for (const requirement of matchExpressions as unknown[]) {
      const choice = requirementChoice(requirement, namespace);
      if (choice === undefined) everyRequirement = false;
      else choices.push(choice);
    }
  }
  return { choices, everyRequirement };
}

/** The index values whose union holds the pods meeting one matchExpressions requirement; undefined: the index cannot say. */
function requirementChoice(requirement: unknown, namespace: string): string[] | undefined {
  if (typeof requirement !== "object" || requirement === null) return undefined;
  const { key, operator, values } = requirement as { key?: unknown; operator?: unknown; values?: unknown };
  if (typeof key !== "string") return undefined;
  if (operator === "Exists") return [labelKey(namespace, key)];
  if (operator === "In" && Array.isArray(values) && values.every((value) => typeof value === "string")) return values.map((value) => labelPair(namespace, key, value));
  return undefined;
}
