// Instance ids recorded in kuperator's ResourceContext, as kube-xset keeps it: the pure rules
// (resource-context.ts) and the reconciler writing them before any pod takes a new id.
import { describe, expect, it } from "vitest";
import { contextWrite, idsHeldByOthers, recordedIds, type CachedResourceContext } from "../../../src/controller/collaset/resource-context.ts";
import type { Pod } from "../../../src/kube/objects.ts";
import { collaSet, ReconcilerHarness } from "./reconciler-harness.ts";

function pod(name: string, id: number, labels: Record<string, string> = {}, terminating = false): Pod {
  return { metadata: { name, labels: { "collaset.kusionstack.io/instance-id": String(id), "controller-revision-hash": "web-r1", ...labels }, ...(terminating ? { deletionTimestamp: "2026-11-26T00:00:00Z" } : {}) } };
}

const context = (contexts: { id: number; data?: Record<string, string> }[]): CachedResourceContext => ({ metadata: { name: "pool", namespace: "ns", resourceVersion: "5" }, spec: { contexts } });

describe("ResourceContext rules", () => {
  it("records every id given (of a pod awaiting replacement and its replacement, the live one) with the owner, revision and replace pair", () => {
    const ids = recordedIds("web", [pod("a", 0, { "collaset.kusionstack.io/to-replace": "x" }), pod("b", 1, {}, true), pod("s", 2, { "collaset.kusionstack.io/replace-pair-origin-name": "a" })], [{ instanceId: 3, pod: pod("new", 3) }]);
    expect(Object.fromEntries(ids)).toEqual({
      0: { Owner: "web", Revision: "web-r1", ReplaceNewTargetID: "2" },
      1: { Owner: "web", Revision: "web-r1" },
      2: { Owner: "web", Revision: "web-r1", ReplaceOriginTargetID: "0" },
      3: { Owner: "web", Revision: "web-r1" },
    });
  });

  it("creates the context, replaces it when the ids change, keeps kuperator's other data, deletes it once empty", () => {
    const ids = new Map([[1, { Owner: "web" }], [0, { Owner: "web" }]]);
    expect(contextWrite({ context: undefined, owner: "web", shared: false, ids })).toEqual({ kind: "create", spec: { contexts: [{ id: 0, data: { Owner: "web" } }, { id: 1, data: { Owner: "web" } }] } });
    const existing = context([{ id: 0, data: { Owner: "web", TargetJustCreate: "true", ReplaceNewTargetID: "4" } }, { id: 1, data: { Owner: "web" } }]);
    expect(contextWrite({ context: existing, owner: "web", shared: false, ids })).toEqual({ kind: "replace", spec: { contexts: [{ id: 0, data: { TargetJustCreate: "true", Owner: "web" } }, { id: 1, data: { Owner: "web" } }] } });
    expect(contextWrite({ context: context([{ id: 0, data: { Owner: "web" } }, { id: 1, data: { Owner: "web" } }]), owner: "web", shared: false, ids })).toEqual({ kind: "none" });
    expect(contextWrite({ context: existing, owner: "web", shared: false, ids: new Map() })).toEqual({ kind: "delete" });
    expect(contextWrite({ context: undefined, owner: "web", shared: false, ids: new Map() })).toEqual({ kind: "none" });
  });

  it("in a shared context keeps the other owners' entries, and their ids are not to be taken", () => {
    const shared = context([{ id: 0, data: { Owner: "api" } }, { id: 1, data: { Owner: "web" } }]);
    expect([...idsHeldByOthers(shared, "web")]).toEqual([0]);
    expect(contextWrite({ context: shared, owner: "web", shared: true, ids: new Map([[2, { Owner: "web" }]]) })).toEqual({ kind: "replace", spec: { contexts: [{ id: 0, data: { Owner: "api" } }, { id: 2, data: { Owner: "web" } }] } });
    // The last owner leaves: the context goes.
    expect(contextWrite({ context: context([{ id: 1, data: { Owner: "web" } }]), owner: "web", shared: true, ids: new Map() })).toEqual({ kind: "delete" });
  });
});

describe("the CollaSet reconciler and its ResourceContext", () => {
  it("records the ids before creating the pods, skips ids another CollaSet holds in the shared context, and leaves the context when deleted", async () => {
    const harness = new ReconcilerHarness();
    harness.contexts.upsert(context([{ id: 0, data: { Owner: "api" } }]));
    const shared = collaSet({ replicas: 2 });
    shared.spec.scaleStrategy = { context: "pool" };
    harness.applyCollaSet(shared);
    await harness.reconciler.reconcile("ns/web");
    expect(harness.writes.findIndex((write) => write.startsWith("contexts.replace"))).toBeLessThan(harness.writes.findIndex((write) => write.startsWith("pods.create")));
    expect(harness.pods.list("ns").map((created) => created.metadata?.labels?.["collaset.kusionstack.io/instance-id"]).sort()).toEqual(["1", "2"]);
    expect(harness.contexts.get("ns", "pool")?.spec?.contexts?.map((detail) => [detail.id, detail.data?.Owner])).toEqual([[0, "api"], [1, "web"], [2, "web"]]);

    // A refused write of the context: no pod takes a new id.
    harness.applyCollaSet({ ...shared, spec: { ...shared.spec, replicas: 3 } });
    harness.failNext("contexts.replace", new Error("etcd is down"));
    await harness.reconciler.reconcile("ns/web").catch(() => undefined);
    expect(harness.pods.list("ns")).toHaveLength(2);

    harness.collaSets.delete("ns/web");
    await harness.reconciler.reconcile("ns/web");
    expect(harness.contexts.get("ns", "pool")?.spec?.contexts?.map((detail) => detail.id)).toEqual([0]);
  });

  it("lets a replaced pod's id go as soon as the pod is on its way out, not when its object is gone (kube-xset)", async () => {
    const harness = new ReconcilerHarness();
    harness.applyCollaSet(collaSet({ replicas: 1 }));
    await harness.settle(10);
    const origin = harness.pods.list("ns")[0]!;
    // Its containers take a while to stop: the object stays, terminating.
    harness.pods.upsert({ ...origin, metadata: { ...origin.metadata, finalizers: ["example.com/slow-exit"], labels: { ...origin.metadata?.labels, "collaset.kusionstack.io/to-replace": "true" }, resourceVersion: "labelled" } });
    await harness.settle(10);
    expect(harness.pods.get("ns", origin.metadata!.name!)?.metadata?.deletionTimestamp).toBeDefined();
    const surge = harness.pods.list("ns").find((pod) => pod.metadata?.deletionTimestamp == null)!;
    expect(harness.contexts.get("ns", "web")?.spec?.contexts?.map((detail) => detail.id)).toEqual([Number(surge.metadata!.labels!["collaset.kusionstack.io/instance-id"])]);
  });
});
