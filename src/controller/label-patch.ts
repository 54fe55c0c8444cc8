// The one way a controller changes an object's labels: a JSON Patch guarded by the object's
// resourceVersion (a concurrent change fails the write instead of being overwritten), adding the
// labels map when there is none, removing only keys that are there.
import type { KubeObject } from "../kube/objects.ts";
import { pointerSegment, type JsonPatchOperation } from "../kube/patch.ts";

export function labelOperations(object: KubeObject, set: Readonly<Record<string, string>>, remove: readonly string[]): JsonPatchOperation[] {
  const labels = object.metadata?.labels;
  const operations: JsonPatchOperation[] = [{ op: "test", path: "/metadata/resourceVersion", value: object.metadata?.resourceVersion }];
  if (labels === undefined) operations.push({ op: "add", path: "/metadata/labels", value: {} });
  for (const key of remove) if (labels !== undefined && key in labels && !(key in set)) operations.push({ op: "remove", path: `/metadata/labels/${pointerSegment(key)}` });
  for (const [key, value] of Object.entries(set)) operations.push({ op: "add", path: `/metadata/labels/${pointerSegment(key)}`, value });
  return operations;
}
