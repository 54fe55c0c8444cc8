// Reading the manifests the CLI is given: YAML (or JSON) files with any number of documents,
// `kind: List` flattened, each object validated like the webhook would, every problem
// reported at once as `Kind/name: field.path: reason`.
import { parseAllDocuments } from "yaml";
import { duplicateError, formatFieldErrors, requiredError } from "../api/field-errors.ts";
import { podWithoutNullFields } from "../api/null-fields.ts";
import { type Pod, validatePod } from "../api/pod.ts";
import { defaultPodDecoration, type PodDecoration, validatePodDecoration } from "../api/poddecoration.ts";
import { DEFAULT_NAMESPACE } from "../decoration/selection.ts";
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

/** Every PodDecoration in `text`, validated and defaulted (null fields read as absent). */
export function loadDecorations(text: string, file: string): PodDecoration[] {
  const objects = parseManifests(text, file);
  const lines: string[] = [];
  const decorations: PodDecoration[] = [];
  const seen = new Set<string>();
  for (const object of objects) {
    const errors = validatePodDecoration(object);
    if (errors.length > 0) {
      lines.push(...formatFieldErrors(kindOf(object, "PodDecoration"), nameOf(object), errors));
      continue;
    }
    const decoration = defaultPodDecoration(object as PodDecoration);
    const name = decoration.metadata.name ?? "";
    if (name === "") {
      // The recorded revisions name their decoration; a generated name does not exist yet.
      lines.push(...formatFieldErrors("PodDecoration", nameOf(object), [requiredError("metadata.name", "an offline render needs the decoration's name")]));
      continue;
    }
    const id = `${decoration.metadata.namespace ?? DEFAULT_NAMESPACE}/${name}`;
    if (seen.has(id)) lines.push(...formatFieldErrors("PodDecoration", name, [duplicateError("metadata.name", name)]));
    seen.add(id);
    decorations.push(decoration);
  }
  if (lines.length > 0) throw new UsageError(lines);
  return decorations;
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
