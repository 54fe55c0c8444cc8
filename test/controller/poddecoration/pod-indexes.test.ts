// The pod cache's indexes for the PodDecoration controller: the pods a selector can match are a
// superset of those it matches (never fewer), narrowed by the most selective requirement an
// index answers; the pods recording a decoration are found without a scan. Both give what a
// scan of the namespace gives, also after pods change labels or recordings. The decoration
// cache's selector index: the decorations a pod event maps to, a superset of those selecting it.
import { describe, expect, it } from "vitest";
import type { PodDecoration } from "../../../src/api/poddecoration.ts";
import { decorationsSelectable, indexDecorationsBySelector, indexPodsForDecorations, podsForSelector, podsRecording, selectablePods } from "../../../src/controller/poddecoration/pod-indexes.ts";
import { podDecorationKeysForPod } from "../../../src/controller/poddecoration/mappers.ts";
import type { CachedDecoration } from "../../../src/controller/poddecoration/reconciler.ts";
import { selectorMatches } from "../../../src/decoration/selector.ts";
import { Cache } from "../../../src/controller/runtime/cache.ts";
import { formatRevisionsAnnotation, REVISIONS_ANNOTATION } from "../../../src/decoration/recording.ts";
import { isMatchedPod } from "../../../src/decoration/rollout.ts";
import type { Pod } from "../../../src/kube/objects.ts";

function pod(name: string, labels: Record<string, string>, recorded: string[] = [], namespace = "shop"): Pod {
  const annotations = recorded.length === 0 ? undefined : { [REVISIONS_ANNOTATION]: formatRevisionsAnnotation(recorded.map((decoration) => ({ name: decoration, revision: `${decoration}-1` }))) };
  return { metadata: { name, namespace, labels, ...(annotations === undefined ? {} : { annotations }) }, spec: { containers: [] } };
}

function decoration(name: string, selector: unknown, namespace = "shop"): PodDecoration {
  return { apiVersion: "apps.kusionstack.io/v1alpha1", kind: "PodDecoration", metadata: { name, namespace }, spec: { selector: selector as PodDecoration["spec"]["selector"], template: {} } };
}

const pods = [
  pod("web-1", { app: "web", tier: "front" }, ["mesh"]),
  pod("web-2", { app: "web", tier: "front", track: "canary" }, ["mesh", "canary"]),
  pod("api-1", { app: "api", tier: "back" }, ["mesh"]),
  pod("db-1", { app: "db" }),
  pod("job-1", { batch: "yes" }),
  pod("web-other", { app: "web", tier: "front" }, ["mesh"], "other"),
];

const selectors: Record<string, unknown> = {
  "matchLabels": { matchLabels: { app: "web" } },
  "two matchLabels": { matchLabels: { app: "web", track: "canary" } },
  "In": { matchExpressions: [{ key: "app", operator: "In", values: ["web", "api"] }] },
  "Exists": { matchExpressions: [{ key: "track", operator: "Exists" }] },
  "NotIn": { matchExpressions: [{ key: "app", operator: "NotIn", values: ["web"] }] },
  "DoesNotExist": { matchExpressions: [{ key: "app", operator: "DoesNotExist" }] },
  "NotIn with matchLabels": { matchLabels: { tier: "front" }, matchExpressions: [{ key: "track", operator: "NotIn", values: ["canary"] }] },
  "everything": {},
  "absent": undefined,
  "In without values (invalid)": { matchExpressions: [{ key: "app", operator: "In", values: [] }] },
  "not an object": "app=web",
  "no such label": { matchLabels: { app: "nothing" } },
};

function names(list: readonly Pod[]): string[] {
  return list.map((item) => item.metadata?.name ?? "").sort();
}

function indexed(): Cache<Pod> {
  const cache = new Cache<Pod>();
  for (const item of pods) cache.upsert(item);
  indexPodsForDecorations(cache);
  indexPodsForDecorations(cache); // twice is once
  return cache;
}

describe("selectablePods", () => {
  it.each(Object.entries(selectors))("%s: holds every matched pod of the namespace and nothing of another", (_name, selector) => {
    const cache = indexed();
    const pd = decoration("pd", selector);
    const selectable = selectablePods(cache, pd);
    const matched = cache.list("shop").filter((item) => isMatchedPod(pd, item));
    expect(names(selectable)).toEqual(expect.arrayContaining(names(matched)));
    expect(selectable.every((item) => item.metadata?.namespace === "shop")).toBe(true);
  });

  it("narrows by the most selective requirement the index answers", () => {
    const cache = indexed();
    const narrowed = (selector: unknown) => names(selectablePods(cache, decoration("pd", selector)));
    expect(narrowed(selectors["matchLabels"])).toEqual(["web-1", "web-2"]);
    expect(narrowed(selectors["two matchLabels"])).toEqual(["web-2"]);
    expect(narrowed(selectors["In"])).toEqual(["api-1", "web-1", "web-2"]);
    expect(narrowed(selectors["Exists"])).toEqual(["web-2"]);
    expect(narrowed(selectors["NotIn with matchLabels"])).toEqual(["web-1", "web-2"]);
    expect(narrowed(selectors["no such label"])).toEqual([]);
    expect(narrowed(selectors["In without values (invalid)"])).toEqual([]);
    // Nothing to narrow by: the namespace.
    for (const name of ["NotIn", "DoesNotExist", "everything", "absent", "not an object"]) expect(narrowed(selectors[name])).toEqual(["api-1", "db-1", "job-1", "web-1", "web-2"]);
  });

  it("follows label changes and deletions", () => {
    const cache = indexed();
    const pd = decoration("pd", selectors["matchLabels"]);
    cache.upsert(pod("db-1", { app: "web" }));
    cache.delete("shop/web-1");
    expect(names(selectablePods(cache, pd))).toEqual(["db-1", "web-2"]);
  });

  it("is the namespace's pods when the cache has no label index", () => {
    const cache = new Cache<Pod>();
    for (const item of pods) cache.upsert(item);
    expect(names(selectablePods(cache, decoration("pd", selectors["matchLabels"])))).toEqual(["api-1", "db-1", "job-1", "web-1", "web-2"]);
  });
});

describe("podsForSelector", () => {
  const exactly = ["matchLabels", "In", "Exists", "no such label"];

  it.each(Object.keys(selectors))("%s: says it answered exactly only when its pods are those the selector selects in the namespace", (name) => {
    const cache = indexed();
    const pd = decoration("pd", selectors[name]);
    const { pods: selectable, selected } = podsForSelector(cache, pd);
    expect(selected).toBe(exactly.includes(name));
    expect(names(selectable)).toEqual(names(selectablePods(cache, pd)));
    if (selected) expect(names(selectable)).toEqual(names(cache.list("shop").filter((item) => selectorMatches(pd.spec.selector, item.metadata?.labels))));
  });

  it("stays exact after a pod's labels change and after a deletion", () => {
    const cache = indexed();
    cache.upsert(pod("db-1", { app: "web" }));
    cache.upsert(pod("web-2", { app: "api", track: "canary" }));
    cache.delete("shop/web-1");
    for (const name of exactly) {
      const pd = decoration("pd", selectors[name]);
      const scanned = cache.list("shop").filter((item) => selectorMatches(pd.spec.selector, item.metadata?.labels));
      expect(podsForSelector(cache, pd)).toEqual({ pods: expect.arrayContaining(scanned) as unknown, selected: true });
      expect(names(podsForSelector(cache, pd).pods)).toEqual(names(scanned));
    }
    // The index hands out the objects now cached, not the ones they replaced.
    expect(podsForSelector(cache, decoration("pd", selectors["matchLabels"])).pods).toEqual([cache.get("shop", "db-1")]);
    expect(podsForSelector(cache, decoration("pd", selectors["matchLabels"])).pods[0]).toBe(cache.get("shop", "db-1"));
  });

  it("is not exact for a selector whose shape or values the API would reject", () => {
    const cache = indexed();
    for (const selector of [{ matchLabels: { "bad key!": "web" } }, { matchLabels: { app: "not a value!" } }, { matchExpressions: [{ key: "app", operator: "Exists", values: ["web"] }] }]) {
      expect(podsForSelector(cache, decoration("pd", selector)).selected).toBe(false);
    }
  });

  it("is never exact without the label index", () => {
    const cache = new Cache<Pod>();
    for (const item of pods) cache.upsert(item);
    expect(podsForSelector(cache, decoration("pd", selectors["matchLabels"])).selected).toBe(false);
  });
});

describe("podsRecording", () => {
  it("finds the pods of the namespace that record the decoration, with or without the index", () => {
    const plain = new Cache<Pod>();
    for (const item of pods) plain.upsert(item);
    for (const cache of [indexed(), plain]) {
      expect(names(podsRecording(cache, decoration("mesh", {})))).toEqual(["api-1", "web-1", "web-2"]);
      expect(names(podsRecording(cache, decoration("canary", {})))).toEqual(["web-2"]);
      expect(names(podsRecording(cache, decoration("mesh", {}, "other")))).toEqual(["web-other"]);
      expect(podsRecording(cache, decoration("none", {}))).toEqual([]);
    }
  });

  it("follows a pod that stops recording a decoration", () => {
    const cache = indexed();
    cache.upsert(pod("web-2", { app: "web" }, ["canary"]));
    expect(names(podsRecording(cache, decoration("mesh", {})))).toEqual(["api-1", "web-1"]);
  });
});

describe("decorationsSelectable", () => {
  function decorationCache(indexedBySelector = true): Cache<CachedDecoration> {
    const cache = new Cache<CachedDecoration>();
    for (const [name, selector] of Object.entries(selectors)) cache.upsert(decoration(name, selector) as CachedDecoration);
    cache.upsert(decoration("elsewhere", {}, "other") as CachedDecoration);
    if (indexedBySelector) {
      indexDecorationsBySelector(cache);
      indexDecorationsBySelector(cache); // twice is once
    }
    return cache;
  }
  const decorationNames = (list: readonly PodDecoration[]) => list.map((item) => item.metadata.name ?? "").sort();

  it.each(pods.map((item) => [item.metadata?.name ?? "", item] as const))("%s: holds every decoration of its namespace that selects it, and none of another", (_name, item) => {
    const cache = decorationCache();
    const selectable = decorationsSelectable(cache, item);
    const selecting = cache.list(item.metadata?.namespace).filter((pd) => selectorMatches(pd.spec.selector, item.metadata?.labels));
    expect(decorationNames(selectable)).toEqual(expect.arrayContaining(decorationNames(selecting)));
    expect(selectable.every((pd) => pd.metadata.namespace === item.metadata?.namespace)).toBe(true);
  });

  it("narrows to the decorations whose indexed requirement the pod's labels meet, plus those nothing can narrow", () => {
    const cache = decorationCache();
    const unnarrowed = ["DoesNotExist", "NotIn", "absent", "everything", "not an object"];
    expect(decorationNames(decorationsSelectable(cache, pod("db-1", { app: "db" })))).toEqual(unnarrowed);
    expect(decorationNames(decorationsSelectable(cache, pods[1]!))).toEqual([...unnarrowed, "Exists", "In", "NotIn with matchLabels", "matchLabels", "two matchLabels"].sort());
  });

  it("follows a decoration whose selector changes, and one deleted", () => {
    const cache = decorationCache();
    cache.upsert(decoration("no such label", { matchLabels: { app: "db" } }) as CachedDecoration);
    cache.delete("shop/DoesNotExist");
    expect(decorationNames(decorationsSelectable(cache, pod("db-1", { app: "db" })))).toEqual(["NotIn", "absent", "everything", "no such label", "not an object"]);
  });

  it("is the namespace's decorations when the cache has no selector index", () => {
    expect(decorationsSelectable(decorationCache(false), pod("db-1", { app: "db" }))).toHaveLength(Object.keys(selectors).length);
  });
});

describe("podDecorationKeysForPod", () => {
  it("names the decorations selecting either state of the pod and those it records, in its namespace only", () => {
    const cache = new Cache<CachedDecoration>();
    for (const [name, selector] of [["web", { matchLabels: { app: "web" } }], ["api", { matchLabels: { app: "api" } }], ["mesh", { matchLabels: { mesh: "on" } }], ["canary", { matchLabels: { track: "canary" } }]] as const) {
      cache.upsert(decoration(name, selector) as CachedDecoration);
      cache.upsert(decoration(name, selector, "other") as CachedDecoration);
    }
    indexDecorationsBySelector(cache);
    const before = pod("p", { app: "web" }, ["mesh"]);
    const after = pod("p", { app: "api" }, ["mesh"]);
    expect([...podDecorationKeysForPod(cache, [before, after])].sort()).toEqual(["shop/api", "shop/mesh", "shop/web"]);
    expect([...podDecorationKeysForPod(cache, [pod("q", { track: "canary" }, [], "other")])]).toEqual(["other/canary"]);
  });
});
