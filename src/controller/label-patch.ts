// The one way a controller changes an object's labels or annotations: a JSON Patch guarded by
// the object's resourceVersion (a concurrent change fails the write instead of being
// overwritten), adding the map when there is none, removing only keys that are there.
import type { KubeObject } from "../kube/objects.ts";
import { pointerSegment, type JsonPatchOperation } from "../kube/patch.ts";

export function labelOperations(object: KubeObject, set: Readonly<Record<string, string>>, remove: readonly string[]): JsonPatchOperation[] {
  return metadataMapOperations(object, "labels", set, remove);
}

export function annotationOperations(object: KubeObject, set: Readonly<Record<string, string>>, remove: readonly string[]): JsonPatchOperation[] {
  return metadataMapOperations(object, "annotations", set, remove);
}

function metadataMapOperations(object: KubeObject, field: "labels" | "annotations", set: Readonly<Record<string, string>>, remove: readonly string[]): JsonPatchOperation[] {
  const map = object.metadata?.[field];
  const operations: JsonPatchOperation[] = [{ op: "test", path: "/metadata/resourceVersion", value: object.metadata?.resourceVersion }];
  if (map === undefined) operations.push({ op: "add", path: `/metadata/${field}`, value: {} });
  for (const key of remove) if (map !== undefined && key in map && !(key in set)) operations.push({ op: "remove", path: `/metadata/${field}/${pointerSegment(key)}` });
  for (const [key, value] of Object.entries(set)) operations.push({ op: "add", path: `/metadata/${field}/${pointerSegment(key)}`, value });
  return operations;
}
