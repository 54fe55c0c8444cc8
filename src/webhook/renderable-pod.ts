// Whether the engine can render into a pod as the API server sent it: only the fields it reads
// or writes, and only their JSON types (lists are lists, names are strings). Nothing else about
// the pod is judged here — not enum values, not names, not fields this project has never heard
// of: the API server validates pods, and a pod it would admit must never be refused by us
// (DESIGN §10). A pod from the API server always has these types (it decodes into typed structs
// first); only a hand-made AdmissionReview can fail, and then the pod is admitted undecorated.
import { nestingErrors } from "../api/nesting.ts";

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** `null` is how Go writes an empty optional field; the engine reads it as absent. */
function isAbsent(value: unknown): boolean {
  return value === undefined || value === null;
}

// Every pod the webhook admits is checked: plain loops, which allocate nothing.
function isStringMap(value: unknown): boolean {
  if (isAbsent(value)) return true;
  if (!isObject(value)) return false;
  for (const key in value) if (typeof value[key] !== "string") return false;
  return true;
}

/** A list of objects, each with a string at `key`; absent is fine when `optional`. */
function isKeyedList(value: unknown, key: string, optional: boolean): boolean {
  if (isAbsent(value)) return optional;
  if (!Array.isArray(value)) return false;
  for (let index = 0; index < value.length; index++) {
    const item: unknown = value[index];
    if (!isObject(item) || typeof item[key] !== "string") return false;
  }
  return true;
}

function containerProblem(container: Json): string | undefined {
  if (!isKeyedList(container.env, "name", true)) return "env is not a list of variables with names";
  if (!isKeyedList(container.volumeMounts, "mountPath", true)) return "volumeMounts is not a list of mounts with mount paths";
  return undefined;
}

function containersProblem(list: unknown, path: string, optional: boolean): string | undefined {
  if (!isKeyedList(list, "name", optional)) return `${path}: not a list of containers with names`;
  if (!Array.isArray(list)) return undefined;
  for (let index = 0; index < list.length; index++) {
    const problem = containerProblem(list[index] as Json);
    if (problem !== undefined) return `${path}[${index}]: ${problem}`;
  }
  return undefined;
}

function affinityProblem(affinity: unknown): string | undefined {
  if (isAbsent(affinity)) return undefined;
  if (!isObject(affinity)) return "spec.affinity: not an object";
  const nodeAffinity = affinity.nodeAffinity;
  if (isAbsent(nodeAffinity)) return undefined;
  if (!isObject(nodeAffinity)) return "spec.affinity.nodeAffinity: not an object";
  const required = nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution;
  if (isAbsent(required)) return undefined;
  if (!isObject(required)) return "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution: not an object";
  const terms = required.nodeSelectorTerms;
  if (isAbsent(terms)) return undefined;
  const isRequirements = (value: unknown) => isAbsent(value) || (Array.isArray(value) && value.every(isObject));
  if (!Array.isArray(terms) || !terms.every((term) => isObject(term) && isRequirements(term.matchExpressions) && isRequirements(term.matchFields))) {
    return "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms: not a list of node selector terms";
  }
  return undefined;
}

/**
 * Why the engine cannot render into `object`, or undefined when it can. The reason names the
 * field; it is shown to whoever sent the pod as a warning, never as a refusal.
 */
export function unrenderableReason(object: unknown): string | undefined {
  if (!isObject(object)) return "the object is not a JSON object";
  // Copies and comparisons recurse; a pod nested deeper than any real one is left alone.
  const tooDeep = nestingErrors(object, "");
  if (tooDeep.length > 0) return `${tooDeep[0]!.path}: ${tooDeep[0]!.reason}`;
  const metadata = object.metadata;
  if (!isAbsent(metadata)) {
    if (!isObject(metadata)) return "metadata: not an object";
    if (!isStringMap(metadata.labels)) return "metadata.labels: not a map of strings";
    if (!isStringMap(metadata.annotations)) return "metadata.annotations: not a map of strings";
  }
  const spec = object.spec;
  // A pod without containers is one the API server refuses; decorating it could only hide that.
  if (!isObject(spec)) return "spec: not an object";
  if (!Array.isArray(spec.containers) || spec.containers.length === 0) return "spec.containers: a pod needs at least one container";
  return (
    containersProblem(spec.containers, "spec.containers", false) ??
    containersProblem(spec.initContainers, "spec.initContainers", true) ??
    (isKeyedList(spec.volumes, "name", true) ? undefined : "spec.volumes: not a list of volumes with names") ??
    (isAbsent(spec.tolerations) || (Array.isArray(spec.tolerations) && spec.tolerations.every((toleration) => isObject(toleration) && (isAbsent(toleration.key) || typeof toleration.key === "string")))
      ? undefined
      : "spec.tolerations: not a list of tolerations") ??
    affinityProblem(spec.affinity)
  );
}
