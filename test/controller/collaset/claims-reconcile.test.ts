// The CollaSet reconciler with volumeClaimTemplates (issue 31 item 1): claims made, reused,
// replaced and released as kuperator does (src/controller/collaset/claims.ts names the sources).
import { describe, expect, it } from "vitest";
import type { CollaSet } from "../../../src/api/collaset.ts";
import { INSTANCE_ID_LABEL } from "../../../src/controller/collaset/pod-state.ts";
import { PVC_TEMPLATE_HASH_LABEL, PVC_TEMPLATE_LABEL, RECLAIM_FINALIZER } from "../../../src/controller/collaset/claims.ts";
import type { PersistentVolumeClaim, Pod } from "../../../src/kube/objects.ts";
import { apiError, collaSet, ReconcilerHarness, withClaimTemplate } from "./reconciler-harness.ts";

function withClaims(options: { replicas: number; storage?: string; whenScaled?: "Retain" | "Delete"; whenDeleted?: "Retain" | "Delete" }): CollaSet {
  const cls = withClaimTemplate(collaSet({ replicas: options.replicas }), options.storage);
  cls.spec.scaleStrategy = { persistentVolumeClaimRetentionPolicy: { ...(options.whenScaled === undefined ? {} : { whenScaled: options.whenScaled }), ...(options.whenDeleted === undefined ? {} : { whenDeleted: options.whenDeleted }) } };
  return cls;
}

const settle = (harness: ReconcilerHarness) => harness.settle(10);

const live = (harness: ReconcilerHarness): Pod[] => harness.pods.list("ns").filter((pod) => pod.metadata?.deletionTimestamp == null);
const claimOf = (pod: Pod): string | undefined => pod.spec?.volumes?.find((volume) => volume.name === "data")?.persistentVolumeClaim?.claimName;
const claimsById = (harness: ReconcilerHarness): Record<string, string> =>
  Object.fromEntries(harness.claims.list("ns").map((claim: PersistentVolumeClaim) => [claim.metadata?.labels?.[INSTANCE_ID_LABEL] ?? "", claim.metadata?.name ?? ""]));

describe("CollaSet reconciler: volumeClaimTemplates", () => {
  it("creates each instance's claim before its pod, labelled and owned as kuperator does, and points the pod's volume at it", async () => {
    const harness = new ReconcilerHarness();
    harness.applyCollaSet(withClaims({ replicas: 2 }));
    await settle(harness);
    const claims = harness.claims.list("ns");
    expect(claims).toHaveLength(2);
    for (const claim of claims) {
      expect(claim.metadata?.labels).toMatchObject({ app: "web", "kusionstack.io/control": "true", [PVC_TEMPLATE_LABEL]: "data", [PVC_TEMPLATE_HASH_LABEL]: expect.stringMatching(/^[bcdfghjklmnpqrstvwxz2456789]+$/) as unknown });
      expect(claim.metadata?.ownerReferences).toEqual([{ apiVersion: "apps.kusionstack.io/v1alpha1", kind: "CollaSet", name: "web", uid: "uid-collaset", controller: true, blockOwnerDeletion: true }]);
      expect(claim.spec).toEqual({ accessModes: ["ReadWriteOnce"], resources: { requests: { storage: "1Gi" } } });
    }
    const byId = claimsById(harness);
    for (const pod of live(harness)) {
      const claim = harness.claims.get("ns", byId[pod.metadata?.labels?.[INSTANCE_ID_LABEL] ?? ""] ?? "");
      expect(claimOf(pod)).toBe(claim?.metadata?.name);
    }
  });

  it("creates no pod whose claim could not be created, and says why", async () => {
    const harness = new ReconcilerHarness();
    harness.applyCollaSet(withClaims({ replicas: 1 }));
    harness.failNext("claims.create", apiError(403, { reason: "Forbidden", message: 'exceeded quota: storage, requested: requests.storage=1Gi' }));
    await harness.reconciler.reconcile("ns/web");
    expect(harness.pods.list("ns")).toEqual([]);
    expect(harness.events).toContainEqual({ type: "Warning", reason: "FailedCreate", message: "creating instance 0: exceeded quota: storage, requested: requests.storage=1Gi" });
    await settle(harness);
    expect(live(harness).map(claimOf)).toEqual([harness.claims.list("ns")[0]?.metadata?.name]);
  });

  it("gives a recreated instance its old claim back", async () => {
    const harness = new ReconcilerHarness();
    harness.applyCollaSet(withClaims({ replicas: 1 }));
    await settle(harness);
    const [claim] = harness.claims.list("ns");
    harness.pods.delete(`ns/${live(harness)[0]!.metadata!.name!}`);
    await settle(harness);
    expect(harness.claims.list("ns")).toEqual([claim]);
    expect(live(harness).map(claimOf)).toEqual([claim!.metadata!.name]);
  });

  it("recreates a pod whose claim template changed, on a new claim, and deletes the old one (whenScaled Delete)", async () => {
    const harness = new ReconcilerHarness();
    harness.applyCollaSet(withClaims({ replicas: 1 }));
    await settle(harness);
    const [before] = live(harness);
    const [oldClaim] = harness.claims.list("ns");
    harness.applyCollaSet(withClaims({ replicas: 1, storage: "2Gi" }));
    await settle(harness);
    const [after] = live(harness);
    expect(after!.metadata!.name).not.toBe(before!.metadata!.name);
    const claims = harness.claims.list("ns");
    expect(claims.map((claim) => claim.spec?.resources?.requests?.storage)).toEqual(["2Gi"]);
    expect(claims[0]!.metadata!.labels![PVC_TEMPLATE_HASH_LABEL]).not.toBe(oldClaim!.metadata!.labels![PVC_TEMPLATE_HASH_LABEL]);
    expect(claimOf(after!)).toBe(claims[0]!.metadata!.name);
  });

  it("keeps the old claim beside the new one under whenScaled Retain", async () => {
    const harness = new ReconcilerHarness();
    harness.applyCollaSet(withClaims({ replicas: 1, whenScaled: "Retain" }));
    await settle(harness);
    harness.applyCollaSet(withClaims({ replicas: 1, storage: "2Gi", whenScaled: "Retain" }));
    await settle(harness);
    expect(harness.claims.list("ns").map((claim) => claim.spec?.resources?.requests?.storage).sort()).toEqual(["1Gi", "2Gi"]);
  });

  it("deletes a scaled-in instance's claim under whenScaled Delete (the default)", async () => {
    const harness = new ReconcilerHarness();
    harness.applyCollaSet(withClaims({ replicas: 2 }));
    await settle(harness);
    const kept = claimsById(harness)["0"];
    harness.applyCollaSet(withClaims({ replicas: 1 }));
    await settle(harness);
    expect(claimsById(harness)).toEqual({ 0: kept });
    expect(harness.events.some((event) => event.reason === "SuccessfulDeleteClaim" && event.message.endsWith("instance 1 was scaled in"))).toBe(true);
  });

  it("keeps a scaled-in instance's claim under whenScaled Retain and gives it back when the instance returns", async () => {
    const harness = new ReconcilerHarness();
    harness.applyCollaSet(withClaims({ replicas: 2, whenScaled: "Retain" }));
    await settle(harness);
    const claims = claimsById(harness);
    harness.applyCollaSet(withClaims({ replicas: 1, whenScaled: "Retain" }));
    await settle(harness);
    expect(live(harness)).toHaveLength(1);
    expect(claimsById(harness)).toEqual(claims);
    harness.applyCollaSet(withClaims({ replicas: 2, whenScaled: "Retain" }));
    await settle(harness);
    expect(claimsById(harness)).toEqual(claims);
    const returned = live(harness).find((pod) => pod.metadata?.labels?.[INSTANCE_ID_LABEL] === "1");
    expect(claimOf(returned!)).toBe(claims["1"]);
  });

  it("gives a scaled-in id and its retained claim back to a scale-out while the scaled-in pod is still terminating (kube-xset releases the id at once)", async () => {
    const harness = new ReconcilerHarness();
    harness.applyCollaSet(withClaims({ replicas: 2, whenScaled: "Retain" }));
    await settle(harness);
    const claims = claimsById(harness);
    // The scaled-in pod stays, terminating, for as long as something holds it (its containers stopping, a finalizer).
    const scaledIn = live(harness).find((pod) => pod.metadata?.labels?.[INSTANCE_ID_LABEL] === "1")!;
    harness.pods.upsert({ ...scaledIn, metadata: { ...scaledIn.metadata, finalizers: ["example.com/slow-exit"], resourceVersion: "held" } });
    harness.applyCollaSet(withClaims({ replicas: 1, whenScaled: "Retain" }));
    await settle(harness);
    expect(harness.pods.get("ns", scaledIn.metadata!.name!)?.metadata?.deletionTimestamp).toBeDefined();
    harness.applyCollaSet(withClaims({ replicas: 2, whenScaled: "Retain" }));
    await settle(harness);
    expect(claimsById(harness)).toEqual(claims);
    const returned = live(harness).find((pod) => pod.metadata?.name !== scaledIn.metadata?.name && pod.metadata?.labels?.[INSTANCE_ID_LABEL] !== "0")!;
    expect(returned.metadata?.labels?.[INSTANCE_ID_LABEL]).toBe("1");
    expect(claimOf(returned)).toBe(claims["1"]);
  });

  it("under whenDeleted Retain holds the CollaSet with kuperator's finalizer and lets its claims go before it goes", async () => {
    const harness = new ReconcilerHarness();
    harness.applyCollaSet(withClaims({ replicas: 1, whenDeleted: "Retain" }));
    await settle(harness);
    const cached = harness.collaSets.get("ns", "web")!;
    expect(cached.metadata.finalizers).toEqual([RECLAIM_FINALIZER]);
    harness.collaSets.upsert({ ...cached, metadata: { ...cached.metadata, deletionTimestamp: new Date(harness.clock.now()).toISOString() } });
    await harness.reconciler.reconcile("ns/web");
    expect(harness.claims.list("ns").map((claim) => claim.metadata?.ownerReferences)).toEqual([[]]);
    expect(harness.collaSets.get("ns", "web")!.metadata.finalizers).toEqual([]);
  });

  it("adds no finalizer under whenDeleted Delete: the garbage collector deletes the claims with the CollaSet", async () => {
    const harness = new ReconcilerHarness();
    harness.applyCollaSet(withClaims({ replicas: 1 }));
    await settle(harness);
    expect(harness.collaSets.get("ns", "web")!.metadata.finalizers).toBeUndefined();
  });

  it("adopts the claims a CollaSet deleted under whenDeleted Retain left, and its pods use them", async () => {
    const harness = new ReconcilerHarness();
    harness.applyCollaSet(withClaims({ replicas: 1 }));
    await settle(harness);
    const [claim] = harness.claims.list("ns");
    const left = { ...claim!, metadata: { ...claim!.metadata, ownerReferences: [] } };
    harness.claims.upsert(left);
    harness.pods.delete(`ns/${live(harness)[0]!.metadata!.name!}`);
    await settle(harness);
    expect(harness.claims.list("ns").map((item) => [item.metadata?.name, item.metadata?.ownerReferences?.[0]?.uid])).toEqual([[claim!.metadata!.name, "uid-collaset"]]);
    expect(live(harness).map(claimOf)).toEqual([claim!.metadata!.name]);
  });
});

describe("CollaSet reconciler: claims around a replace (to-replace)", () => {
  const labelPod = (harness: ReconcilerHarness, pod: Pod, labels: Record<string, string | undefined>) => {
    const next = structuredClone(pod);
    for (const [key, value] of Object.entries(labels)) {
      if (value === undefined) delete next.metadata!.labels![key];
      else next.metadata!.labels![key] = value;
    }
    harness.pods.upsert({ ...next, metadata: { ...next.metadata, resourceVersion: `${pod.metadata?.resourceVersion ?? ""}l` } });
  };

  it("gives the surge pod claims of its own id, and deletes the origin's with it even under whenScaled Retain", async () => {
    const harness = new ReconcilerHarness();
    harness.applyCollaSet(withClaims({ replicas: 1, whenScaled: "Retain" }));
    await settle(harness);
    const origin = live(harness)[0]!;
    labelPod(harness, origin, { "collaset.kusionstack.io/to-replace": "true" });
    await settle(harness);
    expect(live(harness)).toHaveLength(1);
    const surge = live(harness)[0]!;
    expect(surge.metadata?.name).not.toBe(origin.metadata?.name);
    expect(Object.keys(claimsById(harness))).toEqual([surge.metadata!.labels![INSTANCE_ID_LABEL]]);
    expect(claimOf(surge)).toBe(claimsById(harness)[surge.metadata!.labels![INSTANCE_ID_LABEL]!]);
  });

  it("deletes a cancelled surge pod's claims and keeps the origin's", async () => {
    const harness = new ReconcilerHarness();
    harness.applyCollaSet(withClaims({ replicas: 1, whenScaled: "Retain" }));
    await settle(harness);
    const origin = live(harness)[0]!;
    labelPod(harness, origin, { "collaset.kusionstack.io/to-replace": "true" });
    await harness.reconciler.reconcile("ns/web");
    expect(Object.keys(claimsById(harness)).sort()).toEqual(["0", "1"]);
    // Cancelled before the surge pod runs (the harness's kubelet has not started it).
    labelPod(harness, harness.pods.get("ns", origin.metadata!.name!)!, { "collaset.kusionstack.io/to-replace": undefined });
    await harness.reconciler.reconcile("ns/web");
    await harness.reconciler.reconcile("ns/web");
    expect(live(harness).map((pod) => pod.metadata?.name)).toEqual([origin.metadata?.name]);
    expect(Object.keys(claimsById(harness))).toEqual(["0"]);
  });
});
