import { ApiException } from "@kubernetes/client-node";
import { describe, expect, it } from "vitest";
import { controllerUidIndex, namespaceIndex } from "../../../src/controller/runtime/cache.ts";
import { FakeClock, settle } from "../fake-clock.ts";
import { Informer, waitForCacheSync } from "../../../src/controller/runtime/informer.ts";
import { stripManagedFields } from "../../../src/controller/runtime/strip-managed-fields.ts";
import type { ConfigMap } from "../../../src/kube/objects.ts";
import { configMap, listOf, ScriptedListWatch } from "./scripted-list-watch.ts";

interface Recorded {
  kind: "add" | "update" | "delete";
  name: string;
  resourceVersion: string;
  old?: string;
}

function setup(options: { watchdogMs?: number; freezeObjects?: boolean; transform?: (object: ConfigMap) => ConfigMap } = {}) {
  const clock = new FakeClock();
  const listWatch = new ScriptedListWatch();
  const informer = new Informer<ConfigMap>({ name: "configmaps", listWatch, clock, watchTimeoutSeconds: () => 300, ...options });
  const events: Recorded[] = [];
  const rv = (object: ConfigMap) => object.metadata?.resourceVersion ?? "";
  const name = (object: ConfigMap) => object.metadata?.name ?? "";
  informer.addEventHandler({
    onAdd: (object) => events.push({ kind: "add", name: name(object), resourceVersion: rv(object) }),
    onUpdate: (old, object) => events.push({ kind: "update", name: name(object), resourceVersion: rv(object), old: rv(old) }),
    onDelete: (object) => events.push({ kind: "delete", name: name(object), resourceVersion: rv(object) }),
  });
  const stop = new AbortController();
  const running = informer.run(stop.signal);
  return { clock, listWatch, informer, events, stop, running };
}

const gone = () => new ApiException(410, "Gone", JSON.stringify({ kind: "Status", code: 410, reason: "Expired", message: "too old resource version" }), {});

describe("Informer", () => {
  it("is synced only after a list succeeds, and serves the listed objects", async () => {
    const { listWatch, informer, events, stop, running, clock } = setup();
    listWatch.answerList(new Error("connection refused")).answerList(listOf("10", configMap("a", "5"), configMap("b", "7")));
    await settle();
    expect(informer.hasSynced()).toBe(false);
    await clock.advance(200);
    expect(informer.hasSynced()).toBe(true);
    expect(informer.cache.list().map((object) => object.metadata?.name).sort()).toEqual(["a", "b"]);
    expect(informer.cache.get("default", "a")?.data).toEqual({ version: "5" });
    expect(events.map((event) => `${event.kind} ${event.name}`).sort()).toEqual(["add a", "add b"]);
    const watch = await listWatch.nextWatch();
    expect(watch.options).toEqual({ resourceVersion: "10", timeoutSeconds: 300 });
    stop.abort();
    await running;
  });

  it("retries a failing list with capped exponential backoff from 200ms", async () => {
    const { listWatch, informer, stop, running, clock } = setup();
    for (let attempt = 0; attempt < 12; attempt++) listWatch.answerList(new Error("apiserver down"));
    await settle();
    const waits: number[] = [];
    for (let attempt = 0; attempt < 10; attempt++) {
      const wait = clock.nextTimerIn();
      if (wait === undefined) throw new Error("no retry scheduled");
      waits.push(wait);
      await clock.advance(wait);
    }
    expect(waits).toEqual([200, 400, 800, 1600, 3200, 6400, 12800, 25600, 30000, 30000]);
    expect(listWatch.lists).toBe(11);
    expect(informer.hasSynced()).toBe(false);
    expect(informer.stats().errors).toBe(11);
    stop.abort();
    await running;
  });

  it("applies watch events to the cache and tells the handlers, old and new", async () => {
    const { listWatch, informer, events, stop, running } = setup();
    listWatch.answerList(listOf("10", configMap("a", "5")));
    const watch = await listWatch.nextWatch();
    events.length = 0;
    watch.emit({ type: "ADDED", object: configMap("b", "11") });
    watch.emit({ type: "MODIFIED", object: configMap("a", "12") });
    watch.emit({ type: "DELETED", object: configMap("b", "13") });
    expect(events).toEqual([
      { kind: "add", name: "b", resourceVersion: "11" },
      { kind: "update", name: "a", resourceVersion: "12", old: "5" },
      { kind: "delete", name: "b", resourceVersion: "13" },
    ]);
    expect(informer.cache.keys()).toEqual(["default/a"]);
    expect(informer.cache.get("default", "a")?.metadata?.resourceVersion).toBe("12");
    expect(informer.lastSyncResourceVersion()).toBe("13");
    stop.abort();
    await running;
  });

  it("hands out deeply frozen objects, so a mutation throws", async () => {
    const { listWatch, informer, stop, running } = setup();
    listWatch.answerList(listOf("10", configMap("a", "5")));
    const watch = await listWatch.nextWatch();
    watch.emit({ type: "ADDED", object: configMap("b", "11") });
    for (const object of informer.cache.list()) {
      expect(() => {
        object.data!.version = "changed";
      }).toThrow(TypeError);
      expect(() => {
        object.metadata!.labels = {};
      }).toThrow(TypeError);
    }
    stop.abort();
    await running;
  });

  it("caches, indexes and hands out what its transform returns, for listed and watched objects", async () => {
    const managedFields = [{ manager: "kubectl", operation: "Update", fieldsType: "FieldsV1", fieldsV1: { "f:data": {} } }];
    const { listWatch, informer, events, stop, running } = setup({ transform: stripManagedFields });
    listWatch.answerList(listOf("10", configMap("a", "5", { metadata: { name: "a", namespace: "default", resourceVersion: "5", managedFields } })));
    const watch = await listWatch.nextWatch();
    watch.emit({ type: "ADDED", object: configMap("b", "11", { metadata: { name: "b", namespace: "other", resourceVersion: "11", managedFields } }) });
    expect(informer.cache.list().map((object) => object.metadata)).toEqual([
      { name: "a", namespace: "default", resourceVersion: "5" },
      { name: "b", namespace: "other", resourceVersion: "11" },
    ]);
    expect(informer.cache.byIndex(namespaceIndex, "other").map((object) => object.metadata?.name)).toEqual(["b"]);
    expect(Object.isFrozen(informer.cache.get("other", "b")?.metadata)).toBe(true);
    expect(events.map((event) => `${event.kind} ${event.name}`)).toEqual(["add a", "add b"]);
    stop.abort();
    await running;
  });

  it("can hand out unfrozen objects when asked to", async () => {
    const { listWatch, informer, stop, running } = setup({ freezeObjects: false });
    listWatch.answerList(listOf("10", configMap("a", "5")));
    await listWatch.nextWatch();
    expect(Object.isFrozen(informer.cache.get("default", "a"))).toBe(false);
    stop.abort();
    await running;
  });

  it("relists at once on a 410 watch event and reconciles the cache with the new list", async () => {
    const { listWatch, informer, events, stop, running, clock } = setup();
    listWatch.answerList(listOf("10", configMap("a", "5"), configMap("b", "6"), configMap("c", "7")));
    const first = await listWatch.nextWatch();
    events.length = 0;
    // While we were away: a changed, b deleted, d created, c untouched.
    listWatch.answerList(listOf("50", configMap("a", "40"), configMap("c", "7"), configMap("d", "45")));
    first.emit({ type: "ERROR", object: { kind: "Status", code: 410, reason: "Expired", message: "too old resource version: 10 (30)" } });
    const second = await listWatch.nextWatch();
    expect(clock.now() - Date.UTC(2026, 0, 1)).toBe(0);
    expect(first.signal.aborted).toBe(true);
    expect(listWatch.lists).toBe(2);
    expect(second.options.resourceVersion).toBe("50");
    expect(events).toEqual(
      expect.arrayContaining([
        { kind: "update", name: "a", resourceVersion: "40", old: "5" },
        { kind: "add", name: "d", resourceVersion: "45" },
        { kind: "delete", name: "b", resourceVersion: "6" },
      ]),
    );
    expect(events).toHaveLength(3);
    expect(informer.cache.keys().sort()).toEqual(["default/a", "default/c", "default/d"]);
    expect(informer.stats().expired).toBe(1);
    expect(informer.hasSynced()).toBe(true);
    stop.abort();
    await running;
  });

  it("relists when the watch request itself fails with HTTP 410", async () => {
    const { listWatch, stop, running } = setup();
    listWatch.answerList(listOf("10")).answerList(listOf("20"));
    const first = await listWatch.nextWatch();
    first.fail(gone());
    const second = await listWatch.nextWatch();
    expect(second.options.resourceVersion).toBe("20");
    expect(listWatch.lists).toBe(2);
    stop.abort();
    await running;
  });

  it("restarts a failed watch from its last resourceVersion with backoff, without relisting", async () => {
    const { listWatch, informer, stop, running, clock } = setup();
    listWatch.answerList(listOf("10"));
    let watch = await listWatch.nextWatch();
    watch.emit({ type: "ADDED", object: configMap("a", "11") });
    const waits: number[] = [];
    for (let attempt = 0; attempt < 4; attempt++) {
      watch.fail(new ApiException(500, "Internal Server Error", "{}", {}));
      await settle();
      waits.push(clock.nextTimerIn() ?? -1);
      await clock.advance(clock.nextTimerIn() ?? 0);
      watch = await listWatch.nextWatch();
      expect(watch.options.resourceVersion).toBe("11");
    }
    expect(waits).toEqual([200, 400, 800, 1600]);
    // A watch that delivers again resets the backoff.
    watch.emit({ type: "MODIFIED", object: configMap("a", "12") });
    watch.fail(new Error("socket hang up"));
    await settle();
    expect(clock.nextTimerIn()).toBe(200);
    await clock.advance(200);
    watch = await listWatch.nextWatch();
    expect(watch.options.resourceVersion).toBe("12");
    expect(listWatch.lists).toBe(1);
    expect(informer.stats().errors).toBe(5);
    stop.abort();
    await running;
  });

  it("re-watches at once when the server ends a watch that delivered events", async () => {
    const { listWatch, stop, running, clock } = setup();
    listWatch.answerList(listOf("10"));
    const first = await listWatch.nextWatch();
    first.emit({ type: "ADDED", object: configMap("a", "11") });
    first.close();
    const second = await listWatch.nextWatch();
    expect(second.options.resourceVersion).toBe("11");
    expect(clock.now()).toBe(Date.UTC(2026, 0, 1));
    stop.abort();
    await running;
  });

  it("backs off when the server keeps closing watches at once without a word", async () => {
    const { listWatch, stop, running, clock, informer } = setup();
    listWatch.answerList(listOf("10"));
    const first = await listWatch.nextWatch();
    first.close();
    await settle();
    expect(clock.nextTimerIn()).toBe(200);
    expect(informer.stats().watches).toBe(1);
    stop.abort();
    await running;
  });

  it("restarts a watch that stays silent past the watchdog, keeping its resourceVersion", async () => {
    const { listWatch, informer, stop, running, clock } = setup({ watchdogMs: 60_000 });
    listWatch.answerList(listOf("10"));
    const first = await listWatch.nextWatch();
    await clock.advance(59_999);
    expect(first.signal.aborted).toBe(false);
    // A bookmark is a sign of life and moves the resourceVersion on.
    first.emit({ type: "BOOKMARK", object: { kind: "ConfigMap", apiVersion: "v1", metadata: { resourceVersion: "33" } } });
    await clock.advance(59_999);
    expect(first.signal.aborted).toBe(false);
    await clock.advance(1);
    expect(first.signal.aborted).toBe(true);
    const second = await listWatch.nextWatch();
    expect(second.options.resourceVersion).toBe("33");
    expect(informer.stats()).toMatchObject({ silent: 1, lists: 1, errors: 0 });
    stop.abort();
    await running;
  });

  it("replays cached objects as adds to a handler registered after sync", async () => {
    const { listWatch, informer, stop, running } = setup();
    listWatch.answerList(listOf("10", configMap("a", "1"), configMap("b", "2")));
    await listWatch.nextWatch();
    const late: string[] = [];
    informer.addEventHandler({ onAdd: (object) => late.push(object.metadata?.name ?? "") });
    expect(late.sort()).toEqual(["a", "b"]);
    stop.abort();
    await running;
  });

  it("keeps going when a handler throws", async () => {
    const { listWatch, informer, events, stop, running } = setup();
    informer.addEventHandler({
      onAdd: () => {
        throw new Error("handler bug");
      },
    });
    listWatch.answerList(listOf("10"));
    const watch = await listWatch.nextWatch();
    watch.emit({ type: "ADDED", object: configMap("a", "11") });
    watch.emit({ type: "ADDED", object: configMap("b", "12") });
    expect(informer.cache.size).toBe(2);
    expect(events.filter((event) => event.kind === "add")).toHaveLength(2);
    stop.abort();
    await running;
  });

  it("keeps indexes by namespace, controller owner and custom functions in step with events", async () => {
    const { listWatch, informer, stop, running } = setup();
    const withOwner = (object: ConfigMap, uid: string): ConfigMap => ({
      ...object,
      metadata: { ...object.metadata, ownerReferences: [{ apiVersion: "v1", kind: "Owner", name: "o", uid: "other", controller: false }, { apiVersion: "v1", kind: "Owner", name: "o", uid, controller: true }] },
    });
    informer.cache.addIndex("by-app", (object) => (object.metadata?.labels?.app === undefined ? [] : [object.metadata.labels.app]));
    listWatch.answerList(listOf("10", withOwner(configMap("a", "1"), "u1"), withOwner(configMap("b", "2", {}, "other"), "u1"), configMap("c", "3", {}, "other")));
    const watch = await listWatch.nextWatch();
    expect(informer.cache.list("other").map((object) => object.metadata?.name).sort()).toEqual(["b", "c"]);
    expect(informer.cache.byIndex(namespaceIndex, "default").map((object) => object.metadata?.name)).toEqual(["a"]);
    expect(informer.cache.byIndex(controllerUidIndex, "default/u1").map((object) => object.metadata?.name)).toEqual(["a"]);
    // Owner references never cross namespaces: b, in another, is filed apart.
    expect(informer.cache.byIndex(controllerUidIndex, "other/u1").map((object) => object.metadata?.name)).toEqual(["b"]);
    expect(informer.cache.byIndex(controllerUidIndex, "other")).toEqual([]);
    watch.emit({ type: "MODIFIED", object: { ...configMap("c", "20", {}, "other"), metadata: { ...configMap("c", "20", {}, "other").metadata, labels: { app: "web" } } } });
    watch.emit({ type: "MODIFIED", object: withOwner(configMap("a", "21"), "u2") });
    watch.emit({ type: "DELETED", object: withOwner(configMap("b", "22", {}, "other"), "u1") });
    expect(informer.cache.byIndex("by-app", "web").map((object) => object.metadata?.name)).toEqual(["c"]);
    expect(informer.cache.indexKeys(controllerUidIndex, "default/u1")).toEqual([]);
    expect(informer.cache.indexKeys(controllerUidIndex, "other/u1")).toEqual([]);
    expect(informer.cache.indexKeys(controllerUidIndex, "default/u2")).toEqual(["default/a"]);
    expect(informer.cache.list("other").map((object) => object.metadata?.name)).toEqual(["c"]);
    expect(() => informer.cache.byIndex("missing", "x")).toThrow(/no index/);
    expect(() => informer.cache.addIndex("by-app", () => [])).toThrow(/already exists/);
    stop.abort();
    await running;
  });

  it("waitForCacheSync polls until every informer has synced, or gives up on abort", async () => {
    const clock = new FakeClock();
    let synced = false;
    const waiting = waitForCacheSync(new AbortController().signal, clock, { hasSynced: () => true }, { hasSynced: () => synced });
    await clock.advance(1000);
    synced = true;
    await clock.advance(100);
    await expect(waiting).resolves.toBe(true);
    const stop = new AbortController();
    const abandoned = waitForCacheSync(stop.signal, clock, { hasSynced: () => false });
    stop.abort();
    await expect(abandoned).resolves.toBe(false);
  });

  it("stops listing and watching when its signal aborts", async () => {
    const { listWatch, stop, running } = setup();
    listWatch.answerList(listOf("10"));
    const watch = await listWatch.nextWatch();
    stop.abort();
    await running;
    expect(watch.signal.aborted).toBe(true);
    expect(listWatch.watches).toHaveLength(1);
  });
});
