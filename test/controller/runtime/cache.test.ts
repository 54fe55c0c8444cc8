// The cache's index buckets (cache.ts): live, and versioned so that what a reader derives from
// a bucket's objects (status.ts holds pods' facts per bucket) is derived again once, and only
// once, the bucket changed.
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

  it("changes its version with every object filed, replaced or removed, and keeps it while others' buckets change", () => {
    const cache = new Cache<KubeObject>();
    cache.addIndex("team", (filed) => [filed.metadata?.labels?.["team"] ?? ""]);
    cache.upsert(object("shop", "a", { team: "red" }));
    cache.upsert(object("shop", "b", { team: "blue" }));
    const red = cache.indexBucket("team", "red")!;
    const seen = [red.version];
    const versionAfter = (change: () => void) => {
      change();
      seen.push(red.version);
      return red.version;
    };
    expect(versionAfter(() => cache.upsert(object("shop", "b", { team: "green" })))).toBe(seen[0]);
    expect(versionAfter(() => cache.upsert(object("shop", "c", { team: "red" })))).not.toBe(seen.at(-2));
    expect(versionAfter(() => cache.upsert(object("shop", "a", { team: "red", tier: "web" })))).not.toBe(seen.at(-2));
    expect(versionAfter(() => cache.delete("shop/c"))).not.toBe(seen.at(-2));
    expect(names(red.objects)).toEqual(["a"]);
  });

  it("is a new bucket, with a version never given before, once emptied and filled again", () => {
    const cache = new Cache<KubeObject>();
    cache.upsert(object("shop", "a"));
    const first = cache.indexBucket(namespaceIndex, "shop")!;
    const firstVersion = first.version;
    cache.delete("shop/a");
    expect(cache.indexBucket(namespaceIndex, "shop")).toBeUndefined();
    cache.upsert(object("shop", "a"));
    const second = cache.indexBucket(namespaceIndex, "shop")!;
    expect(second).not.toBe(first);
    expect(second.version).toBeGreaterThan(firstVersion);
  });
});
