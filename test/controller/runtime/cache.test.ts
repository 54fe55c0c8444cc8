// The cache's index buckets (cache.ts): live, with what a reader derived from their objects
// (status.ts holds pods' facts there) forgotten whenever they change, and only then.
import { describe, expect, it } from "vitest";
import { Cache, namespaceIndex } from "../../../src/controller/runtime/cache.ts";
import type { KubeObject } from "../../../src/kube/objects.ts";

const object = (namespace: string, name: string, labels: Record<string, string> = {}): KubeObject => ({ metadata: { namespace, name, labels } });
const names = (objects: Iterable<KubeObject> | undefined) => [...(objects ?? [])].map((filed) => filed.metadata?.name).sort();

describe("Cache.indexBucket", () => {
  it("holds what byIndex lists, live, and is undefined for a value nothing is filed under", () => {
    const cache = new Cache<KubeObject>();
    cache.upsert(object("shop", "a"));
    const bucket = cache.indexBucket(namespaceIndex, "shop")!;
    cache.upsert(object("shop", "b"));
    expect(names(bucket.objects)).toEqual(["a", "b"]);
    expect(names(bucket.objects)).toEqual(names(cache.byIndex(namespaceIndex, "shop")));
    expect(cache.indexBucket(namespaceIndex, "other")).toBeUndefined();
    expect(() => cache.indexBucket("none", "shop")).toThrow(/no index named "none"/);
  });

  it("forgets what a reader holds when an object is filed, replaced or removed there, and only then", () => {
    const cache = new Cache<KubeObject>();
    cache.addIndex("team", (filed) => [filed.metadata?.labels?.["team"] ?? ""]);
    cache.upsert(object("shop", "a", { team: "red" }));
    cache.upsert(object("shop", "b", { team: "blue" }));
    const red = cache.indexBucket("team", "red")!;
    const heldAfter = (change: () => void) => {
      red.held = "derived";
      change();
      return red.held;
    };
    // Another bucket's change.
    expect(heldAfter(() => cache.upsert(object("shop", "b", { team: "green" })))).toBe("derived");
    expect(heldAfter(() => cache.upsert(object("shop", "c", { team: "red" })))).toBeUndefined();
    expect(heldAfter(() => cache.upsert(object("shop", "a", { team: "red", tier: "web" })))).toBeUndefined();
    expect(heldAfter(() => cache.delete("shop/c"))).toBeUndefined();
    expect(heldAfter(() => cache.delete("shop/b"))).toBe("derived");
    expect(names(red.objects)).toEqual(["a"]);
  });

  it("is a new bucket, holding nothing, once emptied and filled again", () => {
    const cache = new Cache<KubeObject>();
    cache.upsert(object("shop", "a"));
    const first = cache.indexBucket(namespaceIndex, "shop")!;
    first.held = "derived";
    cache.delete("shop/a");
    expect(cache.indexBucket(namespaceIndex, "shop")).toBeUndefined();
    cache.upsert(object("shop", "a"));
    const second = cache.indexBucket(namespaceIndex, "shop")!;
    expect(second).not.toBe(first);
    expect(second.held).toBeUndefined();
  });
});
