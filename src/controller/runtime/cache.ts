// An informer's store with client-go's Indexer semantics: objects by namespace/name key,
// plus named indexes mapping a value (a namespace, an owner uid, a decoration) to the
// objects that produce it. The indexes file the objects themselves, not their keys: a reader
// of 100,000 pods through an index then skips as many lookups by key.
import { controllerOf, namespacedKey, objectKey, type KubeObject } from "../../kube/objects.ts";

/** The values an object is filed under in one index. */
export type IndexFunc<T> = (object: T) => readonly string[];

export const namespaceIndex = "namespace";
/**
 * Objects by their controller: filed under their own namespace and the controller's UID, since
 * an owner reference never crosses namespaces (the garbage collector ignores one that does), so
 * an object in another namespace naming an owner's UID is never taken for one it controls.
 */
export const controllerUidIndex = "controller-uid";

/** The controller index's value for the objects `owner` controls. */
export function controlledByKey(owner: KubeObject): string {
  return `${owner.metadata?.namespace ?? ""}/${owner.metadata?.uid ?? ""}`;
}

/**
 * The objects filed under one index value, live; the same bucket object while it has objects.
 * `held` is what a reader derived from them (status.ts: its pods' facts), which the cache forgets
 * whenever they change: nothing derived from objects gone or replaced is kept alive by it.
 */
export interface IndexBucket<T> {
  readonly objects: ReadonlySet<T>;
  held: unknown;
}

/** What readers of a cache may do: look up, never write. */
export interface Lister<T extends KubeObject> {
  get(namespace: string | undefined, name: string): T | undefined;
  getByKey(key: string): T | undefined;
  /** Every object, or those in one namespace. */
  list(namespace?: string): T[];
  keys(): string[];
  readonly size: number;
  /** Adds an index (existing objects are filed at once); names are unique per cache. */
  addIndex(name: string, indexFunc: IndexFunc<T>): void;
  hasIndex(name: string): boolean;
  byIndex(name: string, value: string): T[];
  /** The objects under `value`, live, with what a reader holds of them; undefined when there are none. */
  indexBucket(name: string, value: string): IndexBucket<T> | undefined;
  indexKeys(name: string, value: string): string[];
}

export class Cache<T extends KubeObject> implements Lister<T> {
  readonly #items = new Map<string, T>();
  readonly #indexFuncs = new Map<string, IndexFunc<T>>();
  /** index name → value → objects */
  readonly #indexes = new Map<string, Map<string, { objects: Set<T>; held: unknown }>>();

  constructor() {
    this.addIndex(namespaceIndex, (object) => [object.metadata?.namespace ?? ""]);
    this.addIndex(controllerUidIndex, (object) => {
      const uid = controllerOf(object)?.uid;
      return uid === undefined ? [] : [`${object.metadata?.namespace ?? ""}/${uid}`];
    });
  }

  get size(): number {
    return this.#items.size;
  }

  get(namespace: string | undefined, name: string): T | undefined {
    return this.#items.get(namespacedKey(namespace, name));
  }

  getByKey(key: string): T | undefined {
    return this.#items.get(key);
  }

  list(namespace?: string): T[] {
    if (namespace === undefined) return [...this.#items.values()];
    return this.byIndex(namespaceIndex, namespace);
  }

  keys(): string[] {
    return [...this.#items.keys()];
  }

  addIndex(name: string, indexFunc: IndexFunc<T>): void {
    if (this.#indexFuncs.has(name)) throw new Error(`index ${JSON.stringify(name)} already exists`);
    this.#indexFuncs.set(name, indexFunc);
    this.#indexes.set(name, new Map());
    for (const object of this.#items.values()) this.#file(name, indexFunc, object);
  }

  hasIndex(name: string): boolean {
    return this.#indexFuncs.has(name);
  }

  byIndex(name: string, value: string): T[] {
    const index = this.#indexes.get(name);
    if (index === undefined) throw new Error(`no index named ${JSON.stringify(name)}`);
    return [...(index.get(value)?.objects ?? [])];
  }

  indexBucket(name: string, value: string): IndexBucket<T> | undefined {
    const index = this.#indexes.get(name);
    if (index === undefined) throw new Error(`no index named ${JSON.stringify(name)}`);
    return index.get(value);
  }

  indexKeys(name: string, value: string): string[] {
    return this.byIndex(name, value).map(objectKey);
  }

  /** Stores object under its key; returns the object it replaced. */
  upsert(object: T): T | undefined {
    const key = objectKey(object);
    const previous = this.#items.get(key);
    if (previous !== undefined) this.#unfile(previous);
    this.#items.set(key, object);
    for (const [name, indexFunc] of this.#indexFuncs) this.#file(name, indexFunc, object);
    return previous;
  }

  /** Removes the object under key; returns it. */
  delete(key: string): T | undefined {
    const previous = this.#items.get(key);
    if (previous === undefined) return undefined;
    this.#unfile(previous);
    this.#items.delete(key);
    return previous;
  }

  #file(name: string, indexFunc: IndexFunc<T>, object: T): void {
    const index = this.#indexes.get(name)!;
    for (const value of indexFunc(object)) {
      let bucket = index.get(value);
      if (bucket === undefined) index.set(value, (bucket = { objects: new Set(), held: undefined }));
      bucket.objects.add(object);
      bucket.held = undefined;
    }
  }

  /** Takes the object out of every index (the very object filed: the one stored under its key). */
  #unfile(object: T): void {
    for (const [name, indexFunc] of this.#indexFuncs) {
      const index = this.#indexes.get(name)!;
      for (const value of indexFunc(object)) {
        const bucket = index.get(value);
        if (bucket === undefined) continue;
        bucket.objects.delete(object);
        bucket.held = undefined;
        if (bucket.objects.size === 0) index.delete(value);
      }
    }
  }
}
