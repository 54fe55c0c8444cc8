import { describe, expect, it } from "vitest";
import { parseWorkloadKey, workloadKeyOfPod } from "../../../src/controller/workload-rollout/workloads.ts";

const owned = (name: string, owner: { apiVersion: string; kind: string; name: string; uid: string }, labels: Record<string, string> = {}) => ({
  metadata: { name, namespace: "shop", labels, ownerReferences: [{ ...owner, controller: true }] },
});

describe("workload keys", () => {
  it("know a controller by its UID: a pod naming another's StatefulSet by kind and name is not of its workload", () => {
    const victim = owned("db-0", { apiVersion: "apps/v1", kind: "StatefulSet", name: "db", uid: "uid-db" });
    const imposter = owned("db-x", { apiVersion: "apps/v1", kind: "StatefulSet", name: "db", uid: "uid-made-up" });
    expect(workloadKeyOfPod(victim)).not.toBe(workloadKeyOfPod(imposter));
    expect(parseWorkloadKey(workloadKeyOfPod(victim)!)).toEqual({ namespace: "shop", workload: { kind: "StatefulSet", name: "db", uid: "uid-db" } });
  });

  it("make every pod without a controller a workload of its own, and a Deployment's ReplicaSets one", () => {
    const bare = (name: string) => ({ metadata: { name, namespace: "shop" } });
    expect(workloadKeyOfPod(bare("a"))).not.toBe(workloadKeyOfPod(bare("b")));
    expect(parseWorkloadKey(workloadKeyOfPod(bare("a"))!).workload).toEqual({ kind: "Pod", name: "a", uid: "" });
    const old = owned("web-1", { apiVersion: "apps/v1", kind: "ReplicaSet", name: "web-5d8f", uid: "rs-1" }, { "pod-template-hash": "5d8f" });
    const next = owned("web-2", { apiVersion: "apps/v1", kind: "ReplicaSet", name: "web-7c9a", uid: "rs-2" }, { "pod-template-hash": "7c9a" });
    expect(workloadKeyOfPod(old)).toBe(workloadKeyOfPod(next));
    expect(parseWorkloadKey(workloadKeyOfPod(old)!).workload).toEqual({ kind: "Deployment", name: "web", uid: "" });
  });

  it("leave CollaSet pods to the CollaSet controller", () => {
    expect(workloadKeyOfPod(owned("web-0", { apiVersion: "apps.kusionstack.io/v1alpha1", kind: "CollaSet", name: "web", uid: "u" }))).toBeUndefined();
  });
});
