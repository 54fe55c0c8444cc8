import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { Evictions } from "../../src/controller/eviction.ts";
import { RuntimeMetrics } from "../../src/controller/runtime/metrics.ts";
import { FakeClock } from "./fake-clock.ts";
import type { Pod } from "../../src/kube/objects.ts";
import { apiError } from "./collaset/reconciler-harness.ts";

const pod = (name: string): Pod => ({ metadata: { namespace: "ns", name, uid: `uid-${name}` } });
const budget = () => apiError(429, { reason: "TooManyRequests", message: "Cannot evict pod as it would violate the pod's disruption budget." });

describe("Evictions", () => {
  it("backs off per pod after a refusal, doubling up to the cap, and starts over once a pod is forgotten", async () => {
    const clock = new FakeClock();
    const calls: string[] = [];
    let refuse = true;
    const evictions = new Evictions({ clock, initialMs: 1000, maxMs: 4000, client: { evict: (namespace, name, uid) => {
      calls.push(`${namespace}/${name} ${uid ?? ""}`);
      return refuse ? Promise.reject(budget()) : Promise.resolve();
    } } });
    expect(await evictions.evict(pod("a"))).toEqual({ kind: "refused", message: "Cannot evict pod as it would violate the pod's disruption budget.", retryInMs: 1000 });
    // Within the backoff: not asked, the wait left is returned.
    await clock.advance(400);
    expect(await evictions.evict(pod("a"))).toMatchObject({ kind: "refused", retryInMs: 600 });
    expect(calls).toEqual(["ns/a uid-a"]);
    // Another pod has its own backoff.
    expect(await evictions.evict(pod("b"))).toMatchObject({ kind: "refused", retryInMs: 1000 });
    for (const wait of [2000, 4000, 4000]) {
      await clock.advance(4000);
      expect(await evictions.evict(pod("a"))).toMatchObject({ kind: "refused", retryInMs: wait });
    }
    // Pod b is gone: forgotten; a is kept.
    evictions.retain(["uid-a"]);
    expect(evictions.size).toBe(1);
    refuse = false;
    expect(await evictions.evict(pod("b"))).toEqual({ kind: "evicted" });
    await clock.advance(4000);
    expect(await evictions.evict(pod("a"))).toEqual({ kind: "evicted" });
    expect(evictions.size).toBe(0);
  });

  it("throws what is not a budget's refusal", async () => {
    const evictions = new Evictions({ clock: new FakeClock(), client: { evict: () => Promise.reject(apiError(500, { reason: "InternalError", message: "etcd" })) } });
    await expect(evictions.evict(pod("a"))).rejects.toMatchObject({ code: 500 });
    expect(evictions.size).toBe(0);
  });

  it("counts each refusal and reports the pods waiting to be tried again", async () => {
    const registry = new Registry();
    let refuse = true;
    const clock = new FakeClock();
    const evictions = new Evictions({ clock, initialMs: 1000, metrics: new RuntimeMetrics(registry).evictions("collaset"),
      client: { evict: () => (refuse ? Promise.reject(budget()) : Promise.resolve()) } });
    const value = async (name: string) => (await registry.getSingleMetric(name)!.get()).values.find((sample) => sample.labels.controller === "collaset")?.value;
    await evictions.evict(pod("a"));
    await evictions.evict(pod("b"));
    // Within its backoff a pod is not asked again, so nothing more was refused.
    await evictions.evict(pod("a"));
    expect(await value("pod_decorator_eviction_refusals_total")).toBe(2);
    expect(await value("pod_decorator_eviction_refused_pods")).toBe(2);
    refuse = false;
    await clock.advance(1000);
    await evictions.evict(pod("a"));
    expect(await value("pod_decorator_eviction_refused_pods")).toBe(1);
    evictions.retain([]);
    expect(await value("pod_decorator_eviction_refused_pods")).toBe(0);
    expect(await value("pod_decorator_eviction_refusals_total")).toBe(2);
  });
});
