// A Cache that freezes what it stores, as the informers' caches do (DESIGN §7): a reconciler
// that mutates a cached object throws in a unit test as it would in production.
import { Cache } from "../../src/controller/runtime/cache.ts";
import { deepFreeze } from "../../src/controller/runtime/deep-freeze.ts";
import type { KubeObject } from "../../src/kube/objects.ts";

export class FrozenCache<T extends KubeObject> extends Cache<T> {
  override upsert(object: T): T | undefined {
    return super.upsert(deepFreeze(structuredClone(object)));
  }
}
