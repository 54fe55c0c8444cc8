// Reading the manifests the CLI is given: YAML (or JSON) files with any number of documents,
// `kind: List` flattened, each object validated like the webhook would, every problem
// reported at once as `Kind/name: field.path: reason`.
import { parseAllDocuments } from "yaml";
import { duplicateError, formatFieldErrors, invalidError, keyPath, requiredError } from "../api/field-errors.ts";
import { podWithoutNullFields } from "../api/null-fields.ts";
import { type Pod, validatePod } from "../api/pod.ts";
import { asSeenFrom, type ClusterPodDecoration, defaultClusterPodDecoration, validateClusterPodDecoration } from "../api/cluster-poddecoration.ts";
import { CLUSTER_POD_DECORATION_KIND, POD_DECORATION_KIND } from "../api/group.ts";
import type { Labels } from "../api/label-selector.ts";
import { defaultPodDecoration, type PodDecoration, validatePodDecoration } from "../api/poddecoration.ts";
import { namespaceSelectionLabels } from "../decoration/admission-scope.ts";
import { DEFAULT_NAMESPACE } from "../decoration/selection.ts";
import { selectorMatches } from "../decoration/selector.ts";
import { UsageError } from "./usage-error.ts";

/** Every non-empty document in `text`, with `kind: List` items in place of the list. */
export function parseManifests(text: string, file: string): unknown[] {
  const errors: string[] = [];
  const objects: unknown[] = [];
  for (const document of parseAllDocuments(text)) {
    if (document.errors.length > 0) {
      for (const error of document.errors) {
        const position = error.linePos?.[0];
        // The message repeats the position and quotes the source; the first clause is the reason.
        const reason = (error.message.split("\n")[0] ?? "").replace(/ at line \d+, column \d+:?$/, "");
        errors.push(position === undefined ? `${file}: ${reason}` : `${file}:${position.line}:${position.col}: ${reason}`);
      }
      continue;
    }
    const value: unknown = document.toJS();
    if (value === null || value === undefined) continue;
    objects.push(...flattenList(value));
  }
  if (errors.length > 0) throw new UsageError(errors);
  return objects;
}

function flattenList(value: unknown): unknown[] {
  if (isObject(value) && value.kind === "List" && Array.isArray(value.items)) return value.items.flatMap((item: unknown) => flattenList(item));
  return [value];
}

/** The one Pod in `text`, read as the API server would decode it (null fields absent). */
export function loadPod(text: string, file: string): Pod {
  const objects = parseManifests(text, file);
  if (objects.length !== 1) throw new UsageError(`${file}: expected exactly one Pod, found ${objects.length} objects`);
  const pod = podWithoutNullFields(objects[0]);
  const errors = validatePod(pod);
  if (errors.length > 0) throw new UsageError(formatFieldErrors(kindOf(pod, "Pod"), nameOf(pod), errors));
  return pod as Pod;
}

/** The decorations a file gives: namespaced ones, cluster ones, and the labels of the namespaces it describes. */
export interface DecorationManifests {
  decorations: PodDecoration[];
  clusterDecorations: ClusterPodDecoration[];
  /** Namespace name → its labels, from the file's Namespace objects (what cluster decorations select by). */
  namespaceLabels: Map<string, Labels>;
}

/**
 * Every PodDecoration and ClusterPodDecoration in `text`, validated and defaulted (null fields
 * read as absent), and the labels of the Namespace objects in it.
 */
export function loadDecorations(text: string, file: string): DecorationManifests {
  const objects = parseManifests(text, file);
  const lines: string[] = [];
  const loaded: DecorationManifests = { decorations: [], clusterDecorations: [], namespaceLabels: new Map() };
  const seen = new Set<string>();
  for (const object of objects) {
    const kind = kindOf(object, POD_DECORATION_KIND);
    if (kind === "Namespace") {
      lines.push(...addNamespace(object, loaded.namespaceLabels));
      continue;
    }
    const cluster = kind === CLUSTER_POD_DECORATION_KIND;
    const errors = cluster ? validateClusterPodDecoration(object) : validatePodDecoration(object);
    if (errors.length > 0) {
      lines.push(...formatFieldErrors(kind, nameOf(object), errors));
      continue;
    }
    const decoration = cluster ? defaultClusterPodDecoration(object as ClusterPodDecoration) : defaultPodDecoration(object as PodDecoration);
    const name = decoration.metadata.name ?? "";
    if (name === "") {
      // The recorded revisions name their decoration; a generated name does not exist yet.
      lines.push(...formatFieldErrors(kind, nameOf(object), [requiredError("metadata.name", "an offline render needs the decoration's name")]));
      continue;
    }
    const id = cluster ? `${kind}/${name}` : `${decoration.metadata.namespace ?? DEFAULT_NAMESPACE}/${name}`;
    if (seen.has(id)) lines.push(...formatFieldErrors(kind, name, [duplicateError("metadata.name", name)]));
    seen.add(id);
    if (cluster) loaded.clusterDecorations.push(decoration as ClusterPodDecoration);
    else loaded.decorations.push(decoration);
  }
  if (lines.length > 0) throw new UsageError(lines);
  return loaded;
}

export interface NamespaceDecorations {
  /** The namespaced decorations, and the cluster ones selecting the namespace as seen from it. */
  decorations: PodDecoration[];
  /** The cluster decorations whose namespaceSelector does not select the namespace, and why. */
  unselecting: { decoration: PodDecoration; detail: string }[];
}

/**
 * The namespace's decorations as the webhook would take them: its PodDecorations (the others are
 * excluded by the engine, saying why) and the ClusterPodDecorations whose namespaceSelector
 * selects it. The namespace's labels come from a Namespace object in the decorations file; without
 * one it has only the name label the API server sets.
 */
export function decorationsForNamespace(manifests: DecorationManifests, namespace: string): NamespaceDecorations {
  const labels = namespaceSelectionLabels(namespace, manifests.namespaceLabels.get(namespace));
  const decorations: PodDecoration[] = [...manifests.decorations];
  const unselecting: NamespaceDecorations["unselecting"] = [];
  for (const cpd of manifests.clusterDecorations) {
    const view = asSeenFrom(cpd, namespace);
    if (selectorMatches(cpd.spec.namespaceSelector, labels)) decorations.push(view);
    else unselecting.push({ decoration: view, detail: `namespaceSelector ${JSON.stringify(cpd.spec.namespaceSelector)} does not select namespace ${namespace} (labels ${JSON.stringify(labels)})` });
  }
  return { decorations, unselecting };
}

function addNamespace(object: unknown, labels: Map<string, Labels>): string[] {
  const metadata = isObject(object) && isObject(object.metadata) ? object.metadata : {};
  const name = typeof metadata.name === "string" ? metadata.name : "";
  if (name === "") return formatFieldErrors("Namespace", undefined, [requiredError("metadata.name", "the namespace whose labels cluster decorations select by")]);
  if (labels.has(name)) return formatFieldErrors("Namespace", name, [duplicateError("metadata.name", name)]);
  const given = isObject(metadata.labels) ? metadata.labels : {};
  const errors = Object.entries(given).filter(([, value]) => typeof value !== "string").map(([key]) => invalidError(keyPath("metadata.labels", key), given[key], "must be a string"));
  if (errors.length > 0) return formatFieldErrors("Namespace", name, errors);
  labels.set(name, given as Labels);
  return [];
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function kindOf(object: unknown, fallback: string): string {
  return isObject(object) && typeof object.kind === "string" && object.kind !== "" ? object.kind : fallback;
}

function nameOf(object: unknown): string | undefined {
  if (!isObject(object) || !isObject(object.metadata)) return undefined;
  const { name, generateName } = object.metadata;
  if (typeof name === "string" && name !== "") return name;
  return typeof generateName === "string" && generateName !== "" ? `${generateName}<generated>` : undefined;
}
