// desiredStatus: counts and per-CollaSet details from the pods, and the budget that keeps a
// decoration over tens of thousands of CollaSet pods storable (etcd holds 1.5 MiB per object).
import { describe, expect, it } from "vitest";
import type { PodDecoration } from "../../../src/api/poddecoration.ts";
import { desiredStatus, POD_DETAIL_BUDGET_BYTES, type StatusPod } from "../../../src/controller/poddecoration/status.ts";
import { formatRevisionsAnnotation, REVISIONS_ANNOTATION } from "../../../src/decoration/recording.ts";

const REVISION = "certs-6d9f7c8b4";
const TEMPLATE_VALID = { type: "TemplateValid", status: "True", reason: "DryRunAccepted", message: "ok" } as const;
const ETCD_OBJECT_LIMIT = 1.5 * 1024 * 1024;

function decoration(spec: Partial<PodDecoration["spec"]> = {}): PodDecoration {
  return {
    metadata: { name: "certs", namespace: "shop", generation: 1 },
    spec: { selector: { matchLabels: { app: "web" } }, template: { containers: [{ name: "proxy", image: "envoy:1" }] }, ...spec },
  };
}

/** `count` ready pods of CollaSet `collaSet`, on REVISION but the last `outdated`. */
function collaSetPods(collaSet: string, count: number, outdated = 0): StatusPod[] {
  return Array.from({ length: count }, (_, index) => ({
    metadata: {
      name: `${collaSet}-${String(index).padStart(6, "0")}`,
      namespace: "shop",
      labels: { app: "web" },
      annotations: { [REVISIONS_ANNOTATION]: formatRevisionsAnnotation(index >= count - outdated ? [] : [{ name: "certs", revision: REVISION }]) },
      ownerReferences: [{ apiVersion: "apps.kusionstack.io/v1alpha1", kind: "CollaSet", name: collaSet, controller: true }],
    },
    status: { phase: "Running", conditions: [{ type: "Ready", status: "True" }] },
  }));
}

function statusOf(pd: PodDecoration, pods: readonly StatusPod[]) {
  return desiredStatus({ decoration: pd, pods, updatedRevision: REVISION, collisionCount: 0, templateValid: TEMPLATE_VALID, now: "2026-11-24T00:00:00Z" });
}

describe("status.details", () => {
  it("lists each CollaSet's pods, sorted by name, with the revision each records", () => {
    const status = statusOf(decoration(), [...collaSetPods("web", 3, 1), ...collaSetPods("api", 2)].reverse());
    expect(status.details).toEqual([
      { collaSet: "api", affectedReplicas: 2, pods: [{ name: "api-000000", revision: REVISION }, { name: "api-000001", revision: REVISION }] },
      { collaSet: "web", affectedReplicas: 3, pods: [{ name: "web-000000", revision: REVISION }, { name: "web-000001", revision: REVISION }, { name: "web-000002" }] },
    ]);
    expect(status.conditions?.map((condition) => condition.type)).toEqual(["Ready", "TemplateValid"]);
    expect([status.matchedPods, status.injectedPods, status.updatedPods]).toEqual([5, 4, 4]);
  });

  it("leaves the pod lists out, keeps the counts and says why, when they would outgrow the budget", () => {
    const pods = [...collaSetPods("web", 30_000, 10), ...collaSetPods("api", 10_000)];
    const status = statusOf(decoration(), pods);
    expect(status.details).toEqual([{ collaSet: "api", affectedReplicas: 10_000 }, { collaSet: "web", affectedReplicas: 30_000 }]);
    expect([status.matchedPods, status.updatedPods]).toEqual([40_000, 39_990]);
    expect(status.conditions?.find((condition) => condition.type === "PodDetail")).toMatchObject({ status: "False", reason: "TooManyPods" });
    expect(JSON.stringify(status).length).toBeLessThan(ETCD_OBJECT_LIMIT / 10);
    // A tenth of them is still listed, within the budget; all of them listed would be more than etcd holds.
    const tenth = statusOf(decoration(), collaSetPods("web", 4_000));
    expect(tenth.details?.[0]?.pods).toHaveLength(4_000);
    const tenthBytes = JSON.stringify(tenth.details).length;
    expect(tenthBytes).toBeLessThanOrEqual(POD_DETAIL_BUDGET_BYTES);
    expect(tenthBytes * 10).toBeGreaterThan(ETCD_OBJECT_LIMIT);
  });

  it("lists them again once they fit, and the condition goes", () => {
    const previous = statusOf(decoration(), collaSetPods("web", 40_000));
    const status = statusOf({ ...decoration(), status: previous }, collaSetPods("web", 100));
    expect(status.details?.[0]?.pods).toHaveLength(100);
    expect(status.conditions?.map((condition) => condition.type)).toEqual(["Ready", "TemplateValid"]);
  });

  it("lists none with disablePodDetail, and then has nothing to explain", () => {
    const status = statusOf(decoration({ disablePodDetail: true }), collaSetPods("web", 40_000));
    expect(status.details).toEqual([{ collaSet: "web", affectedReplicas: 40_000 }]);
    expect(status.conditions?.map((condition) => condition.type)).toEqual(["Ready", "TemplateValid"]);
  });
});
