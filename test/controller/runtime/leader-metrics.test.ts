import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { RuntimeMetrics } from "../../../src/controller/runtime/metrics.ts";

async function sample(registry: Registry, name: string): Promise<number | undefined> {
  return (await registry.getSingleMetric(name)!.get()).values.find((value) => value.labels.name === "pod-decorator")?.value;
}

describe("leader election metrics", () => {
  it("counts a change of holder, not the first holder seen nor a released lease", async () => {
    const registry = new Registry();
    const leader = new RuntimeMetrics(registry).leader("pod-decorator");
    expect(await sample(registry, "pod_decorator_leader_changes_total")).toBe(0);
    leader.observed("replica-a");
    leader.observed("replica-a");
    expect(await sample(registry, "pod_decorator_leader_changes_total")).toBe(0);
    // A graceful release clears the holder before the successor takes the lease: one change.
    leader.observed("");
    leader.observed("replica-b");
    expect(await sample(registry, "pod_decorator_leader_changes_total")).toBe(1);
    leader.observed("replica-a");
    expect(await sample(registry, "pod_decorator_leader_changes_total")).toBe(2);
  });

  it("reports 1 while leading, and forgets the leader's waiting evictions once it stops", async () => {
    const registry = new Registry();
    const metrics = new RuntimeMetrics(registry);
    const leader = metrics.leader("pod-decorator");
    expect(await sample(registry, "leader_election_master_status")).toBe(0);
    leader.leading(true);
    metrics.evictions("collaset").waiting(3);
    expect(await sample(registry, "leader_election_master_status")).toBe(1);
    leader.leading(false);
    expect(await sample(registry, "leader_election_master_status")).toBe(0);
    expect((await registry.getSingleMetric("pod_decorator_eviction_refused_pods")!.get()).values).toEqual([]);
  });
});
