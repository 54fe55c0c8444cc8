// An informer's store with client-go's Indexer semantics: objects by namespace/name key,
// plus named indexes mapping a value (a namespace, an owner uid, a decoration) to the
// keys of the objects that produce it.
import { controllerOf, namespacedKey, objectKey, type KubeObject } from "../../kube/objects.ts";

/** The values an object is filed under in one index. */
export type IndexFunc<T> = (object: T) => readonly string[];

export const namespaceIndex = "namespace";
export const controllerUidIndex = "controller-uid";

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
  indexKeys(name: string, value: string): string[];
}

export class Cache<T extends KubeObject> implements Lister<T> {
  readonly #items = new Map<string, T>();
  readonly #indexFuncs = new Map<string, IndexFunc<T>>();
  /** index name → value → keys */
  readonly #indexes = new Map<string, Map<string, Set<string>>>();

  constructor() {
    this.addIndex(namespaceIndex, (object) => [object.metadata?.namespace ?? ""]);
    this.addIndex(controllerUidIndex, (object) => {
      const uid = controllerOf(object)?.uid;
      return uid === undefined ? [] : [uid];
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
    for (const [key, object] of this.#items) this.#file(name, indexFunc, key, object);
  }

  hasIndex(name: string): boolean {
    return this.#indexFuncs.has(name);
  }

  byIndex(name: string, value: string): T[] {
    const objects: T[] = [];
    for (const key of this.indexKeys(name, value)) {
      const object = this.#items.get(key);
      if (object !== undefined) objects.push(object);
    }
    return objects;
  }

  indexKeys(name: string, value: string): string[] {
    const index = this.#indexes.get(name);
    if (index === undefined) throw new Error(`no index named ${JSON.stringify(name)}`);
    return [...(index.get(value) ?? [])];
  }

  /** Stores object under its key; returns the object it replaced. */
  upsert(object: T): T | undefined {
    const key = objectKey(object);
    const previous = this.#items.get(key);
    if (previous !== undefined) this.#unfile(key, previous);
    this.#items.set(key, object);
    for (const [name, indexFunc] of this.#indexFuncs) this.#file(name, indexFunc, key, object);
    return previous;
  }

  /** Removes the object under key; returns it. */
  delete(key: string): T | undefined {
    const previous = this.#items.get(key);
    if (previous === undefined) return undefined;
    this.#unfile(key, previous);
    this.#items.delete(key);
    return previous;
  }

  #file(name: string, indexFunc: IndexFunc<T>, key: string, object: T): void {
    const index = this.#indexes.get(name)!;
    for (const value of indexFunc(object)) {
      let keys = index.get(value);
      if (keys === undefined) index.set(value, (keys = new Set()));
      keys.add(key);
    }
  }

  #unfile(key: string, object: T): void {
    for (const [name, indexFunc] of this.#indexFuncs) {
      const index = this.#indexes.get(name)!;
      for (const value of indexFunc(object)) {
        const keys = index.get(value);
        keys?.delete(key);
        if (keys?.size === 0) index.delete(value);
      }
    }
  }
}
