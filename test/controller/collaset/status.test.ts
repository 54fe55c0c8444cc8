// The CollaSet status counts: the replica counts KusionStack reports that the pods tell
// truthfully — scheduled, operating (an in-place update the node has not finished) and
// terminating — beside ready, available and updated.
import { describe, expect, it } from "vitest";
import { desiredCollaSetStatus } from "../../../src/controller/collaset/status.ts";
import type { Pod } from "../../../src/kube/objects.ts";
import { collaSet, pod } from "./fixtures.ts";

function scheduled(live: Pod, isScheduled = true): Pod {
  const conditions = [...(live.status?.conditions ?? []), { type: "PodScheduled", status: isScheduled ? "True" : "False" }];
  return { ...live, status: { ...live.status, conditions } };
}

describe("desiredCollaSetStatus counts", () => {
  it("counts scheduled, operating and terminating pods", () => {
    const pods = [
      scheduled(pod("a", { id: 0, template: "web-r1" })),
      // Updated in place to nginx:1.28; the node still runs 1.27.
      scheduled(pod("b", { id: 1, template: "web-r1", images: { app: "nginx:1.28" }, running: { app: "nginx:1.27" } })),
      scheduled(pod("c", { id: 2, template: "web-r1", ready: false }), false),
      pod("d", { id: 3, template: "web-r1", terminating: true }),
    ];
    const status = desiredCollaSetStatus({ collaSet: collaSet({ replicas: 3 }), pods, updatedRevision: "web-r1", collisionCount: 0, blocked: [], failure: undefined, now: "2026-01-01T00:00:00Z" });
    expect(status).toMatchObject({
      replicas: 3,
      readyReplicas: 2,
      availableReplicas: 1,
      updatedReplicas: 3,
      scheduledReplicas: 2,
      operatingReplicas: 1,
      terminatingReplicas: 1,
    });
  });

  it("counts zero of each for a CollaSet without pods", () => {
    const status = desiredCollaSetStatus({ collaSet: collaSet({ replicas: 0 }), pods: [], updatedRevision: "web-r1", collisionCount: 0, blocked: [], failure: undefined, now: "2026-01-01T00:00:00Z" });
    expect(status).toMatchObject({ scheduledReplicas: 0, operatingReplicas: 0, terminatingReplicas: 0 });
  });
});
