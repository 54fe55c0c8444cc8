// desiredStatus: counts and per-CollaSet details from the pods, the budget that keeps a
// decoration over tens of thousands of CollaSet pods storable (etcd holds 1.5 MiB per object),
// and what it derives once per cached pod object (statusFacts), which must never go stale.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { PodDecoration } from "../../../src/api/poddecoration.ts";
import { indexPodsForDecorations, podsForSelector } from "../../../src/controller/poddecoration/pod-indexes.ts";
import { desiredStatus, POD_DETAIL_BUDGET_BYTES, selectedFacts, statusFacts, type RecordedTemplateOf, type StatusPod } from "../../../src/controller/poddecoration/status.ts";
import { formatRevisionsAnnotation, REVISIONS_ANNOTATION } from "../../../src/decoration/recording.ts";
import type { Pod } from "../../../src/kube/objects.ts";
import { WorkloadTally } from "../../../src/controller/poddecoration/workload-status.ts";
import { RolloutReports } from "../../../src/controller/workload-rollout/reports.ts";
import { workloadKeyOfPod } from "../../../src/controller/workload-rollout/workloads.ts";
import { FrozenCache } from "../frozen-cache.ts";
import { clusterKey } from "../../../src/decoration/decoration-kind.ts";

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

  it("stays far below etcd's limit at 100,000 pods of as many owners: entries beyond the budget are counted, not listed", () => {
    const long = (prefix: string, index: number) => `${prefix}-${"x".repeat(200)}-${String(index).padStart(6, "0")}`;
    // 100,000 CollaSets of one pod each, with the longest names a CollaSet may have.
    const collaSetOwned = Array.from({ length: 100_000 }, (_, index) => collaSetPods(long("cls", index), 1)[0]!);
    const byCollaSet = statusOf(decoration(), collaSetOwned);
    expect(byCollaSet.matchedPods).toBe(100_000);
    expect(byCollaSet.details!.length + (byCollaSet.omittedDetails ?? 0)).toBe(100_000);
    expect(byCollaSet.omittedDetails).toBeGreaterThan(90_000);
    expect(byCollaSet.details!.reduce((sum, detail) => sum + (detail.affectedReplicas ?? 0), 0)).toBe(byCollaSet.details!.length);

    // 100,000 workloads of one pod each, every pod blocked with a long reason.
    const reports = new RolloutReports();
    const workloadPods: StatusPod[] = Array.from({ length: 100_000 }, (_, index) => ({
      metadata: { name: long("pod", index), namespace: "shop", labels: { app: "web" }, ownerReferences: [{ apiVersion: "apps/v1", kind: "StatefulSet", name: long("sts", index), uid: `uid-${index}`, controller: true }] },
      status: { phase: "Running", conditions: [{ type: "Ready", status: "True" }] },
    }));
    for (const pod of workloadPods) {
      reports.set(workloadKeyOfPod(pod)!, new Map([[pod.metadata!.name!, { moving: ["certs"], blocked: { reason: "NeedsRecreation", message: `pod ${pod.metadata!.name!}: ${"a reason long enough to matter. ".repeat(20)}` } }]]));
    }
    const byWorkload = desiredStatus({ decoration: decoration(), pods: workloadPods, updatedRevision: REVISION, collisionCount: 0, templateValid: TEMPLATE_VALID, now: "2026-11-24T00:00:00Z", workloads: new WorkloadTally("shop", "certs", reports) });
    expect(byWorkload.workloads!.length + (byWorkload.omittedWorkloads ?? 0)).toBe(100_000);
    expect(byWorkload.omittedWorkloads).toBeGreaterThan(99_000);
    // Said, as the pod lists' cap is.
    expect(byWorkload.conditions?.find((condition) => condition.type === "WorkloadDetail")).toMatchObject({ status: "False", reason: "TooManyWorkloads" });

    for (const status of [byCollaSet, byWorkload]) expect(Buffer.byteLength(JSON.stringify(status))).toBeLessThan(ETCD_OBJECT_LIMIT / 2);
    // Within the budget nothing is counted as left out.
    expect(statusOf(decoration(), collaSetPods("web", 10)).omittedDetails).toBeUndefined();
  }, 60_000); // 100,000 pods built and summarised: seconds of CPU on a loaded 2-core machine, not a timing claim
});

/** Pod `name` as the cache would hold it: its readiness, phase, CollaSet owner and recorded revisions vary. */
interface PodShape {
  app: "web" | "api";
  phase: "Running" | "Pending" | "Succeeded" | "Failed";
  deleting: boolean;
  ready: boolean;
  collaSet: "web" | "api" | undefined;
  /** The revisions annotation: entries, text that is not the annotation's JSON, or absent (escaped). */
  recorded: { name: string; revision: string }[] | "garbage" | undefined;
}

function shapedPod(name: string, shape: PodShape): Pod {
  const annotations = shape.recorded === undefined ? undefined : { [REVISIONS_ANNOTATION]: shape.recorded === "garbage" ? "[{" : formatRevisionsAnnotation(shape.recorded) };
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      name,
      namespace: "shop",
      labels: { app: shape.app },
      ...(annotations === undefined ? {} : { annotations }),
      ...(shape.deleting ? { deletionTimestamp: "2026-11-24T00:00:00Z" } : {}),
      ...(shape.collaSet === undefined ? {} : { ownerReferences: [{ apiVersion: "apps.kusionstack.io/v1alpha1", kind: "CollaSet", name: shape.collaSet, uid: shape.collaSet, controller: true }] }),
    },
    status: { phase: shape.phase, conditions: [{ type: "Initialized", status: "True" }, { type: "Ready", status: shape.ready ? "True" : "False" }] },
  };
}

const podShape: fc.Arbitrary<PodShape> = fc.record({
  app: fc.constantFrom("web", "api"),
  phase: fc.constantFrom("Running", "Pending", "Succeeded", "Failed"),
  deleting: fc.boolean(),
  ready: fc.boolean(),
  collaSet: fc.constantFrom("web", "api", undefined),
  recorded: fc.oneof(
    fc.array(fc.record({ name: fc.constantFrom("certs", "mesh"), revision: fc.constantFrom(REVISION, "certs-5b8c9d7f6", "mesh-7f6d5c4b3") }), { maxLength: 3 }),
    fc.constant("garbage" as const),
    fc.constant(undefined),
  ),
});

describe("what status derives once per cached pod", () => {
  it("is derived afresh when the pod changes: the cache holds a new object", () => {
    const pods = new FrozenCache<Pod>();
    const shape: PodShape = { app: "web", phase: "Running", deleting: false, ready: false, collaSet: "web", recorded: [{ name: "certs", revision: "certs-5b8c9d7f6" }] };
    pods.upsert(shapedPod("web-0", shape));
    const before = pods.get("shop", "web-0")!;
    expect(statusFacts(before)).toMatchObject({ name: "web-0", live: true, recorded: ["certs", "certs-5b8c9d7f6"], ready: false, collaSet: "web" });
    expect(statusOf(decoration(), pods.list())).toMatchObject({ injectedPods: 1, updatedPods: 0, updatedReadyPods: 0 });

    pods.upsert(shapedPod("web-0", { ...shape, ready: true, collaSet: "api", recorded: [{ name: "certs", revision: REVISION }] }));
    const after = pods.get("shop", "web-0")!;
    expect(statusFacts(after)).toMatchObject({ name: "web-0", live: true, recorded: ["certs", REVISION], ready: true, collaSet: "api" });
    expect(statusOf(decoration(), pods.list())).toMatchObject({ updatedPods: 1, updatedReadyPods: 1, details: [{ collaSet: "api", affectedReplicas: 1 }] });
    // The old object's facts stay what they were: it was never mutated.
    expect(statusFacts(before).ready).toBe(false);
  });

  it("counts what the pods say now, however the cached pods change (also through the label index, and the facts it holds per bucket)", () => {
    // Each decoration with what its selector selects (the status its pods' shapes make), and
    // whether podsForSelector says the label index answers it exactly. For the held facts, `{}`
    // is answered by the namespace's bucket, In of two values by no one bucket (the union of two).
    const decorations: [PodDecoration, (shape: PodShape) => boolean, boolean][] = [
      [decoration(), (shape) => shape.app === "web", true],
      [decoration({ selector: { matchExpressions: [{ key: "app", operator: "Exists" }] } }), () => true, true],
      [{ ...decoration(), metadata: { name: "mesh", namespace: "shop", generation: 3 } }, (shape) => shape.app === "web", true],
      [decoration({ selector: {} }), () => true, false],
      [decoration({ selector: { matchExpressions: [{ key: "app", operator: "In", values: ["web", "db"] }] } }), (shape) => shape.app === "web", true],
    ];
    const expected = (pd: PodDecoration, selects: (shape: PodShape) => boolean, shapes: ReadonlyMap<string, PodShape>) => {
      const counts = { matchedPods: 0, injectedPods: 0, updatedPods: 0, updatedReadyPods: 0 };
      const details = new Map<string, { name: string; revision?: string; escaped?: boolean }[]>();
      for (const [name, shape] of shapes) {
        if (!selects(shape) || shape.deleting || shape.phase === "Succeeded" || shape.phase === "Failed") continue;
        counts.matchedPods++;
        const revision = Array.isArray(shape.recorded) ? shape.recorded.findLast((entry) => entry.name === pd.metadata.name)?.revision : undefined;
        if (revision !== undefined) counts.injectedPods++;
        if (revision === REVISION) counts.updatedPods++;
        if (revision === REVISION && shape.ready) counts.updatedReadyPods++;
        if (shape.collaSet === undefined) continue;
        details.set(shape.collaSet, [...(details.get(shape.collaSet) ?? []), { name, ...(revision === undefined ? {} : { revision }), ...(shape.recorded === undefined ? { escaped: true } : {}) }]);
      }
      return {
        ...counts,
        details: [...details.keys()].sort().map((collaSet) => ({ collaSet, affectedReplicas: details.get(collaSet)!.length, pods: details.get(collaSet)!.sort((a, b) => (a.name < b.name ? -1 : 1)) })),
      };
    };
    const changes = fc.array(fc.tuple(fc.nat(11), podShape), { maxLength: 12 });
    fc.assert(
      fc.property(fc.array(podShape, { minLength: 1, maxLength: 12 }), fc.array(changes, { minLength: 1, maxLength: 4 }), (initial, rounds) => {
        const pods = new FrozenCache<Pod>();
        indexPodsForDecorations(pods);
        const shapes = new Map<string, PodShape>();
        const place = (index: number, shape: PodShape) => {
          const name = `pod-${String(index % initial.length).padStart(2, "0")}`;
          shapes.set(name, shape);
          pods.upsert(shapedPod(name, shape));
        };
        initial.forEach((shape, index) => place(index, shape));
        // Round 0 derives every pod's facts; later rounds change some pods, the status must follow.
        for (const round of [[], ...rounds]) {
          for (const [index, shape] of round) place(index, shape);
          for (const [pd, selects, answeredExactly] of decorations) {
            const status = statusOf(pd, pods.list());
            expect(status).toMatchObject(expected(pd, selects, shapes));
            // The index answers these selectors exactly: the status skips the selector.
            const selectable = podsForSelector(pods, pd);
            expect(selectable.selected).toBe(answeredExactly);
            if (answeredExactly) {
              expect(desiredStatus({ decoration: pd, pods: selectable.pods, podsSelected: true, updatedRevision: REVISION, collisionCount: 0, templateValid: TEMPLATE_VALID, now: "2026-11-24T00:00:00Z" })).toEqual(status);
            }
            // As the reconciler reads them: facts held per index bucket, derived again once it changed.
            expect(desiredStatus({ decoration: pd, selected: selectedFacts(pods, pd), updatedRevision: REVISION, collisionCount: 0, templateValid: TEMPLATE_VALID, now: "2026-11-24T00:00:00Z" })).toEqual(status);
          }
        }
      }),
      { numRuns: 200 },
    );
  });
});

describe("what pods run, judged against the revisions they record", () => {
  // A pod of a fleet records its namespace's PodDecorations and ClusterPodDecorations: judged
  // against both kinds' revisions, the answer is kept while the pod object is unchanged.
  const records = [{ name: "certs", revision: REVISION }, { name: clusterKey("mesh"), revision: "mesh-1" }];
  const judged = (template: RecordedTemplateOf) => {
    const pods = new FrozenCache<Pod>();
    indexPodsForDecorations(pods);
    pods.upsert(shapedPod("web-0", { app: "web", phase: "Running", deleting: false, ready: true, collaSet: "web", recorded: records }));
    const asked: string[] = [];
    const counting: RecordedTemplateOf = (namespace, decoration, revision) => {
      asked.push(`${namespace} ${decoration} ${revision}`);
      return template(namespace, decoration, revision);
    };
    const pass = () => desiredStatus({ decoration: decoration(), selected: selectedFacts(pods, decoration()), updatedRevision: REVISION, collisionCount: 0, templateValid: TEMPLATE_VALID, now: "2026-11-24T00:00:00Z", template: counting });
    return { first: { status: pass(), asked: asked.splice(0) }, second: { status: pass(), asked: asked.splice(0) } };
  };

  it("judges a pod recording both kinds once while it is unchanged, when both kinds' templates are found", () => {
    const { first, second } = judged((namespace, decoration, revision) => (namespace === "shop" && ((decoration === "certs" && revision === REVISION) || (decoration === clusterKey("mesh") && revision === "mesh-1")) ? {} : undefined));
    // Each record is asked for twice: whether it is stored, then for the judgement itself.
    expect(first.asked.sort()).toEqual([`shop ${clusterKey("mesh")} mesh-1`, `shop ${clusterKey("mesh")} mesh-1`, `shop certs ${REVISION}`, `shop certs ${REVISION}`]);
    expect(second.asked).toEqual([]);
    expect(second.status).toEqual(first.status);
  });

  it("judges it again every pass while one of them is not found (nothing is kept that could not be judged)", () => {
    const { first, second } = judged((_namespace, decoration) => (decoration === "certs" ? {} : undefined));
    expect(first.asked).toHaveLength(4);
    expect(second.asked).toEqual(first.asked);
    expect(second.status).toEqual(first.status);
  });
});
