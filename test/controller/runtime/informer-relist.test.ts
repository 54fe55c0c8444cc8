// Informer.relist(): a cache that synced once can still be behind after an outage (its watch
// broken, a long backoff before the next try). relist() makes it current now, and says when.
import { ApiException } from "@kubernetes/client-node";
import { describe, expect, it } from "vitest";
import { Informer } from "../../../src/controller/runtime/informer.ts";
import type { ConfigMap } from "../../../src/kube/objects.ts";
import { FakeClock, settle } from "../fake-clock.ts";
import { configMap, listOf, ScriptedListWatch } from "./scripted-list-watch.ts";

function setup() {
  const clock = new FakeClock();
  const listWatch = new ScriptedListWatch();
  const informer = new Informer<ConfigMap>({ name: "configmaps", listWatch, clock, watchTimeoutSeconds: () => 300 });
  const stop = new AbortController();
  const running = informer.run(stop.signal);
  return { clock, listWatch, informer, stop, running };
}

/** The promise's outcome so far: undefined while it is pending. */
function track<T>(promise: Promise<T>): { value: T | undefined } {
  const state: { value: T | undefined } = { value: undefined };
  void promise.then((value) => (state.value = value));
  return state;
}

const unavailable = () => new ApiException(503, "Service Unavailable", JSON.stringify({ kind: "Status", code: 503, message: "storage is (re)initializing" }), {});

describe("Informer.relist", () => {
  it("lists at once from the middle of a long backoff and resolves with what changed meanwhile", async () => {
    const { clock, listWatch, informer, stop, running } = setup();
    listWatch.answerList(listOf("10", configMap("a", "5")));
    let watch = await listWatch.nextWatch();
    // The API server goes away: each retry fails, the waits double up to 12.8 s.
    for (const wait of [200, 400, 800, 1600, 3200, 6400]) {
      watch.fail(unavailable());
      await settle();
      expect(clock.nextTimerIn()).toBe(wait);
      await clock.advance(wait);
      watch = await listWatch.nextWatch();
    }
    watch.fail(unavailable());
    await settle();
    expect(clock.nextTimerIn()).toBe(12_800);
    expect(informer.hasSynced()).toBe(true);

    const relisted = track(informer.relist(new AbortController().signal));
    await settle();
    expect(listWatch.lists).toBe(2);
    expect(relisted.value).toBeUndefined();
    listWatch.answerList(listOf("20", configMap("a", "15")));
    await settle();
    expect(relisted.value).toBe(true);
    expect(informer.cache.get("default", "a")?.data).toEqual({ version: "15" });
    expect((await listWatch.nextWatch()).options.resourceVersion).toBe("20");
    stop.abort();
    await running;
  });

  it("ends a live watch and resolves only after a list begun after the call", async () => {
    const { listWatch, informer, stop, running } = setup();
    listWatch.answerList(listOf("10", configMap("a", "5")));
    const watch = await listWatch.nextWatch();
    const relisted = track(informer.relist(new AbortController().signal));
    await settle();
    expect(watch.signal.aborted).toBe(true);
    expect(listWatch.lists).toBe(2);
    expect(relisted.value).toBeUndefined();
    listWatch.answerList(listOf("11", configMap("a", "6")));
    await settle();
    expect(relisted.value).toBe(true);
    expect(informer.cache.get("default", "a")?.data).toEqual({ version: "6" });
    stop.abort();
    await running;
  });

  it("asked while a list is running, lists once more after it", async () => {
    const { listWatch, informer, stop, running } = setup();
    await settle();
    expect(listWatch.lists).toBe(1);
    const relisted = track(informer.relist(new AbortController().signal));
    listWatch.answerList(listOf("10", configMap("a", "5")));
    await settle();
    expect(relisted.value).toBeUndefined();
    expect(listWatch.lists).toBe(2);
    listWatch.answerList(listOf("12", configMap("a", "7")));
    await settle();
    expect(relisted.value).toBe(true);
    stop.abort();
    await running;
  });

  it("keeps waiting through a failed list, backing off rather than listing in a loop, and resolves false on abort", async () => {
    const { clock, listWatch, informer, stop, running } = setup();
    listWatch.answerList(listOf("10", configMap("a", "5")));
    const watch = await listWatch.nextWatch();
    const leadership = new AbortController();
    const relisted = track(informer.relist(leadership.signal));
    listWatch.answerList(unavailable());
    await settle();
    expect(watch.signal.aborted).toBe(true);
    expect(listWatch.lists).toBe(2);
    expect(clock.nextTimerIn()).toBe(200);
    expect(relisted.value).toBeUndefined();
    listWatch.answerList(unavailable());
    await clock.advance(200);
    expect(listWatch.lists).toBe(3);
    expect(clock.nextTimerIn()).toBe(400);
    expect(relisted.value).toBeUndefined();
    leadership.abort();
    await settle();
    expect(relisted.value).toBe(false);
    stop.abort();
    await running;
  });
});
