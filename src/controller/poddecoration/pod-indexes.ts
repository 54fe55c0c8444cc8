// The indexes the PodDecoration controller reads through instead of scanning a namespace (at
// 100,000 pods and 1,000 decorations a decoration selecting one workload looks at that
// workload's pods only, and a pod event at the decorations that may select it). The pod cache:
// by label, for the pods a decoration's selector can match, and by recorded decoration, for the
// pods that carry one. The decoration cache: by one label requirement of the selector, for the
// decorations a pod's labels can satisfy. Both answers are supersets (the selector still
// decides); requirements an index cannot narrow (NotIn, DoesNotExist, an invalid selector) fall
// back to the narrowest one that can, else to the whole namespace.
import type { PodDecoration } from "../../api/poddecoration.ts";
import { recordedRevisions } from "../../decoration/recording.ts";
import type { KubeObject, Pod } from "../../kube/objects.ts";
import type { IndexFunc, Lister } from "../runtime/cache.ts";

/** The pod cache's index by label: `namespace\0key` and `namespace\0key=value` for every label. */
export const podLabelIndex = "labels";

export const podLabelIndexFunc: IndexFunc<Pod> = (pod) => {
  const namespace = pod.metadata?.namespace ?? "";
  const values: string[] = [];
  for (const [key, value] of Object.entries(pod.metadata?.labels ?? {})) values.push(labelKey(namespace, key), labelPair(namespace, key, value));
  return values;
};

/** The pod cache's index by the decorations a pod records: `namespace\0name`. */
export const podRecordedDecorationIndex = "recorded-decorations";

export const podRecordedDecorationIndexFunc: IndexFunc<Pod> = (pod) => {
  const namespace = pod.metadata?.namespace ?? "";
  return [...(recordedRevisions(pod)?.keys() ?? [])].map((name) => `${namespace}\0${name}`);
};

const labelKey = (namespace: string, key: string) => `${namespace}\0${key}`;
const labelPair = (namespace: string, key: string, value: string) => `${namespace}\0${key}=${value}`;
/** Filed under by a decoration whose selector no label index can narrow: any pod of the namespace may match. */
const anyLabels = (namespace: string) => `${namespace}\0`;

/** The decoration cache's index by one requirement of the selector: values of the pod label index, or anyLabels. */
export const decorationSelectorIndex = "selector-requirement";

export const decorationSelectorIndexFunc: IndexFunc<PodDecoration & KubeObject> = (decoration) => {
  const namespace = decoration.metadata.namespace ?? "";
  const choices = indexChoices(decoration.spec.selector, namespace);
  // A selected pod meets every requirement: filing under the one with the fewest values is enough.
  if (choices === undefined) return [anyLabels(namespace)];
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
  const keys = new Set(decorations.indexKeys(decorationSelectorIndex, anyLabels(namespace)));
  for (const [key, value] of Object.entries(pod.metadata?.labels ?? {})) {
    for (const indexValue of [labelKey(namespace, key), labelPair(namespace, key, value)]) {
      for (const decorationKey of decorations.indexKeys(decorationSelectorIndex, indexValue)) keys.add(decorationKey);
    }
  }
  const selectable: D[] = [];
  for (const key of keys) {
    const decoration = decorations.getByKey(key);
    if (decoration !== undefined) selectable.push(decoration);
  }
  return selectable;
}

/** Adds both indexes to the pod cache, once (the PodDecoration controller reads through them). */
export function indexPodsForDecorations(pods: Lister<Pod>): void {
  if (!pods.hasIndex(podLabelIndex)) pods.addIndex(podLabelIndex, podLabelIndexFunc);
  if (!pods.hasIndex(podRecordedDecorationIndex)) pods.addIndex(podRecordedDecorationIndex, podRecordedDecorationIndexFunc);
}

/** The pods of the decoration's namespace that record it. Without the index, found by a scan. */
export function podsRecording(pods: Lister<Pod>, decoration: PodDecoration): Pod[] {
  const { namespace = "", name = "" } = decoration.metadata;
  if (!pods.hasIndex(podRecordedDecorationIndex)) return pods.list(namespace).filter((pod) => recordedRevisions(pod)?.has(name) === true);
  return pods.byIndex(podRecordedDecorationIndex, `${namespace}\0${name}`);
}

/**
 * Every pod of the decoration's namespace the selector may match (more is possible, fewer
 * never). Without the label index, the namespace's pods.
 */
export function selectablePods(pods: Lister<Pod>, decoration: PodDecoration): Pod[] {
  const namespace = decoration.metadata.namespace ?? "";
  if (!pods.hasIndex(podLabelIndex)) return pods.list(namespace);
  const choices = indexChoices(decoration.spec.selector, namespace);
  if (choices === undefined) return pods.list(namespace);
  // The narrowest requirement: each choice is a union of index values (In has several).
  let narrowest: string[] | undefined;
  for (const values of choices) {
    const keys = values.length === 1 ? pods.indexKeys(podLabelIndex, values[0]!) : [...new Set(values.flatMap((value) => pods.indexKeys(podLabelIndex, value)))];
    if (narrowest === undefined || keys.length < narrowest.length) narrowest = keys;
    if (narrowest.length === 0) break;
  }
  if (narrowest === undefined) return pods.list(namespace);
  const selected: Pod[] = [];
  for (const key of narrowest) {
    const pod = pods.getByKey(key);
    if (pod !== undefined) selected.push(pod);
  }
  return selected;
}

/** For each requirement the index can answer, the index values whose union holds its pods; undefined: none can. */
function indexChoices(selector: unknown, namespace: string): string[][] | undefined {
  if (typeof selector !== "object" || selector === null || Array.isArray(selector)) return undefined;
  const { matchLabels, matchExpressions } = selector as { matchLabels?: unknown; matchExpressions?: unknown };
  const choices: string[][] = [];
  if (typeof matchLabels === "object" && matchLabels !== null && !Array.isArray(matchLabels)) {
    for (const [key, value] of Object.entries(matchLabels)) if (typeof value === "string") choices.push([labelPair(namespace, key, value)]);
  }
  if (Array.isArray(matchExpressions)) {
    for (const requirement of matchExpressions as unknown[]) {
      if (typeof requirement !== "object" || requirement === null) continue;
      const { key, operator, values } = requirement as { key?: unknown; operator?: unknown; values?: unknown };
      if (typeof key !== "string") continue;
      if (operator === "Exists") choices.push([labelKey(namespace, key)]);
      else if (operator === "In" && Array.isArray(values) && values.every((value) => typeof value === "string")) {
        choices.push((values).map((value) => labelPair(namespace, key, value)));
      }
    }
  }
  return choices.length === 0 ? undefined : choices;
}
