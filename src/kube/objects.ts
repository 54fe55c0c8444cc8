// The plain-JSON shapes of the objects the controllers touch, and the namespace/name keys
// that work queues and caches use for them (client-go's MetaNamespaceKeyFunc).
import type {
  CoreV1Event,
  V1ConfigMap,
  V1ControllerRevision,
  V1Lease,
  V1Namespace,
  V1ObjectMeta,
  V1OwnerReference,
  V1PersistentVolumeClaim,
  V1Pod,
  V1Secret,
} from "@kubernetes/client-node";
import type { Plain } from "./plain.ts";

export type ObjectMeta = Plain<V1ObjectMeta>;
export type OwnerReference = Plain<V1OwnerReference>;

/** Anything with Kubernetes object metadata. */
export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta;
}

export type Pod = Plain<V1Pod>;
export type Namespace = Plain<V1Namespace>;
export type Event = Plain<CoreV1Event>;
export type ControllerRevision = Plain<V1ControllerRevision>;
export type Lease = Plain<V1Lease>;
export type ConfigMap = Plain<V1ConfigMap>;
export type Secret = Plain<V1Secret>;
export type PersistentVolumeClaim = Plain<V1PersistentVolumeClaim>;

/** `namespace/name`, or `name` for cluster-scoped objects. */
export function objectKey(object: KubeObject): string {
  const name = object.metadata?.name ?? "";
  const namespace = object.metadata?.namespace;
  return namespace === undefined || namespace === "" ? name : `${namespace}/${name}`;
}

export function namespacedKey(namespace: string | undefined, name: string): string {
  return namespace === undefined || namespace === "" ? name : `${namespace}/${name}`;
}

/** The inverse of objectKey. */
export function splitKey(key: string): { namespace: string | undefined; name: string } {
  const slash = key.indexOf("/");
  if (slash < 0) return { namespace: undefined, name: key };
  return { namespace: key.slice(0, slash), name: key.slice(slash + 1) };
}

/** The owner reference with controller: true, if any (metav1.GetControllerOf). */
export function controllerOf(object: KubeObject): OwnerReference | undefined {
  return object.metadata?.ownerReferences?.find((reference) => reference.controller === true);
}
