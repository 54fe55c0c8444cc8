import { describe, expect, it } from "vitest";
import { newPodMemory, sameStatuses, stepContainers, type ReportedStatus } from "../../e2e/support/simulated-containers.ts";

const T0 = Date.UTC(2026, 0, 1);
const spec = (image: string) => [{ name: "sidecar", image }, { name: "app", image: "nginx:1.27" }];
const imagesOf = (statuses: readonly ReportedStatus[]) => statuses.map((status) => status.image);

describe("stepContainers", () => {
  it("runs a changed image only restartDelay after the change was first seen, with one more restart", () => {
    const memory = newPodMemory();
    stepContainers(memory, spec("v1"), undefined, T0, 200);
    const pending = stepContainers(memory, spec("v2"), undefined, T0 + 1000, 200);
    expect([imagesOf(pending.statuses), pending.wakeInMs]).toEqual([["v1", "nginx:1.27"], 200]);
    const done = stepContainers(memory, spec("v2"), undefined, T0 + 1200, 200);
    expect([imagesOf(done.statuses), done.statuses[0]?.restartCount, done.wakeInMs]).toEqual([["v2", "nginx:1.27"], 1, undefined]);
  });

  it("never reports an older image again when the cached status has not caught up with its last report", () => {
    const memory = newPodMemory();
    const first = stepContainers(memory, spec("v1"), undefined, T0, 200);
    stepContainers(memory, spec("v2"), first.statuses, T0 + 1000, 200);
    const reportedV2 = stepContainers(memory, spec("v2"), first.statuses, T0 + 1200, 200);
    expect(imagesOf(reportedV2.statuses)).toEqual(["v2", "nginx:1.27"]);
    // The cache still shows the status from before the report of v2.
    const stale = stepContainers(memory, spec("v2"), first.statuses, T0 + 1300, 200);
    expect(stale.statuses).toEqual(reportedV2.statuses);
    expect(stale.wakeInMs).toBeUndefined();
  });

  it("takes what already runs from the pod's status when it meets a pod for the first time", () => {
    const reported: ReportedStatus[] = [{ name: "sidecar", image: "v1", restartCount: 3, state: { running: { startedAt: "2025-12-31T00:00:00Z" } } }];
    const step = stepContainers(newPodMemory(), spec("v1"), reported, T0, 200);
    expect(step.statuses[0]).toMatchObject({ image: "v1", restartCount: 3, state: { running: { startedAt: "2025-12-31T00:00:00Z" } } });
  });
});

describe("sameStatuses", () => {
  it("compares content, not the order in which the API server writes the keys", () => {
    const { statuses } = stepContainers(newPodMemory(), spec("v1"), undefined, T0, 200);
    const fromServer = statuses.map((status) => ({ name: status.name, state: status.state, lastState: {}, ready: status.ready, restartCount: status.restartCount, image: status.image, imageID: status.imageID, started: status.started }));
    expect(JSON.stringify(fromServer)).not.toBe(JSON.stringify(statuses));
    expect(sameStatuses(fromServer, statuses)).toBe(true);
    expect(sameStatuses(fromServer, statuses.map((status) => ({ ...status, image: "other" })))).toBe(false);
    expect(sameStatuses(undefined, statuses)).toBe(false);
  });
});
