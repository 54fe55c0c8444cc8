// Finalizers as JSON Patch operations, the one definition both controllers use. Adding appends
// (or creates the list); removing is guarded by a `test` of the list the cache showed, so a
// concurrent change of the finalizers fails the patch instead of being overwritten.
import type { JsonPatchOperation } from "../kube/patch.ts";

interface WithFinalizers {
  metadata?: { finalizers?: readonly string[] };
}

export function hasFinalizer(object: WithFinalizers, finalizer: string): boolean {
  return (object.metadata?.finalizers ?? []).includes(finalizer);
}

/** The operation adding `finalizer` to the object as the cache shows it. */
export function addFinalizerOperation(object: WithFinalizers, finalizer: string): JsonPatchOperation {
  return object.metadata?.finalizers === undefined
    ? { op: "add", path: "/metadata/finalizers", value: [finalizer] }
    : { op: "add", path: "/metadata/finalizers/-", value: finalizer };
}

/** The operations removing `finalizer`, failing if the finalizers changed since the cache showed them. */
export function removeFinalizerOperations(object: WithFinalizers, finalizer: string): JsonPatchOperation[] {
  const finalizers = object.metadata?.finalizers ?? [];
  return [
    { op: "test", path: "/metadata/finalizers", value: finalizers },
    { op: "replace", path: "/metadata/finalizers", value: finalizers.filter((name) => name !== finalizer) },
  ];
}
