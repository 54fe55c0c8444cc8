// One typed client shape for every namespaced resource the controllers write, built over the
// generated client's per-resource methods. Everything returned is plain JSON (see plain.ts).
import type { V1DeleteOptions } from "@kubernetes/client-node";
import type { KubeObject } from "./objects.ts";
import { patchCallOptions, patchQuery, fieldManager, type JsonPatchOperation, type PatchCallOptions, type PatchKind } from "./patch.ts";
import { toPlain } from "./plain.ts";
import { apiVersionOf, type ResourceType } from "./resources.ts";

export interface ListOptions {
  labelSelector?: string;
  fieldSelector?: string;
}

export interface DeleteOptions {
  propagationPolicy?: "Foreground" | "Background" | "Orphan";
  /** Delete only if the object still has this uid / resourceVersion. */
  preconditions?: { uid?: string; resourceVersion?: string };
  gracePeriodSeconds?: number;
}

export interface ResourceClient<T extends KubeObject> {
  readonly resource: ResourceType;
  get(namespace: string, name: string): Promise<T>;
  /** Across all namespaces when namespace is undefined. */
  list(namespace?: string, options?: ListOptions): Promise<T[]>;
  create(object: T): Promise<T>;
  /** PUT with the object's resourceVersion: a stale one fails with 409 Conflict. */
  replace(object: T): Promise<T>;
  delete(namespace: string, name: string, options?: DeleteOptions): Promise<void>;
  /** Server-side apply as field manager pod-decorator, forcing conflicts. */
  apply(object: T): Promise<T>;
  mergePatch(namespace: string, name: string, patch: object): Promise<T>;
  jsonPatch(namespace: string, name: string, operations: readonly JsonPatchOperation[]): Promise<T>;
}

export interface StatusClient<T extends KubeObject> {
  applyStatus(object: T): Promise<T>;
  mergePatchStatus(namespace: string, name: string, patch: object): Promise<T>;
  jsonPatchStatus(namespace: string, name: string, operations: readonly JsonPatchOperation[]): Promise<T>;
  replaceStatus(object: T): Promise<T>;
}

interface PatchArguments {
  namespace: string;
  name: string;
  body: unknown;
  fieldManager: string;
  force?: boolean;
}

/** The generated client's methods for one resource, in a common shape (the client boundary). */
export interface ResourceOperations {
  get(namespace: string, name: string): Promise<unknown>;
  list(namespace: string | undefined, options: ListOptions): Promise<{ items: readonly unknown[] }>;
  create(namespace: string, body: unknown, fieldManager: string): Promise<unknown>;
  replace(namespace: string, name: string, body: unknown, fieldManager: string): Promise<unknown>;
  patch(args: PatchArguments, options: PatchCallOptions): Promise<unknown>;
  delete(namespace: string, name: string, body: V1DeleteOptions): Promise<unknown>;
}

export interface StatusOperations {
  patchStatus(args: PatchArguments, options: PatchCallOptions): Promise<unknown>;
  replaceStatus(namespace: string, name: string, body: unknown, fieldManager: string): Promise<unknown>;
}

function identity(object: KubeObject, resource: ResourceType): { namespace: string; name: string } {
  const namespace = object.metadata?.namespace;
  const name = object.metadata?.name;
  if (namespace === undefined || namespace === "" || name === undefined || name === "") {
    throw new Error(`${resource.kind} needs metadata.namespace and metadata.name (got ${JSON.stringify({ namespace, name })})`);
  }
  return { namespace, name };
}

export function resourceClient<T extends KubeObject>(resource: ResourceType, operations: ResourceOperations): ResourceClient<T> {
  const apiVersion = apiVersionOf(resource);
  // Responses of the typed clients lack nothing but may be class instances; list items lack kind.
  const plain = (value: unknown): T => ({ ...(toPlain(value) as object), apiVersion, kind: resource.kind }) as T;
  const typed = (object: T): T => ({ ...object, apiVersion, kind: resource.kind });
  const patch = async (kind: PatchKind, namespace: string, name: string, body: unknown) =>
    plain(await operations.patch({ namespace, name, body, ...patchQuery(kind) }, patchCallOptions(kind)));
  return {
    resource,
    async get(namespace, name) {
      return plain(await operations.get(namespace, name));
    },
    async list(namespace, options = {}) {
      const result = await operations.list(namespace, options);
      return result.items.map(plain);
    },
    async create(object) {
      // A name may be left to the server (metadata.generateName); the namespace may not.
      const namespace = object.metadata?.namespace;
      if (namespace === undefined || namespace === "" || (object.metadata?.name === undefined && object.metadata?.generateName === undefined)) identity(object, resource);
      return plain(await operations.create(namespace ?? "", typed(object), fieldManager));
    },
    async replace(object) {
      const { namespace, name } = identity(object, resource);
      return plain(await operations.replace(namespace, name, typed(object), fieldManager));
    },
    async delete(namespace, name, options = {}) {
      await operations.delete(namespace, name, { ...options });
    },
    async apply(object) {
      const { namespace, name } = identity(object, resource);
      return patch("apply", namespace, name, typed(object));
    },
    mergePatch: (namespace, name, body) => patch("merge", namespace, name, body),
    jsonPatch: (namespace, name, operationsList) => patch("json", namespace, name, operationsList),
  };
}

export function statusClient<T extends KubeObject>(resource: ResourceType, operations: StatusOperations): StatusClient<T> {
  const apiVersion = apiVersionOf(resource);
  const plain = (value: unknown): T => ({ ...(toPlain(value) as object), apiVersion, kind: resource.kind }) as T;
  const typed = (object: T): T => ({ ...object, apiVersion, kind: resource.kind });
  const patch = async (kind: PatchKind, namespace: string, name: string, body: unknown) =>
    plain(await operations.patchStatus({ namespace, name, body, ...patchQuery(kind) }, patchCallOptions(kind)));
  return {
    async applyStatus(object) {
      const { namespace, name } = identity(object, resource);
      return patch("apply", namespace, name, typed(object));
    },
    mergePatchStatus: (namespace, name, body) => patch("merge", namespace, name, body),
    jsonPatchStatus: (namespace, name, operationsList) => patch("json", namespace, name, operationsList),
    async replaceStatus(object) {
      const { namespace, name } = identity(object, resource);
      return plain(await operations.replaceStatus(namespace, name, typed(object), fieldManager));
    },
  };
}
