// managedFields (server-side apply's field ownership) make up a third or more of a typical
// pod on the wire, and no reader of our caches looks at them: informers drop them, as
// controller-runtime's TransformStripManagedFields does.
import type { KubeObject } from "../../kube/objects.ts";

/** The object without metadata.managedFields (a shallow copy; the input is not changed). */
export function stripManagedFields<T extends KubeObject>(object: T): T {
  if (object.metadata?.managedFields === undefined) return object;
  const { managedFields: _managedFields, ...metadata } = object.metadata;
  return { ...object, metadata };
}
