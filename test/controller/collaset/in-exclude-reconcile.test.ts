// The CollaSet reconciler letting pods leave (podToExclude) and join (podToInclude) with their
// claims, and naming pods by namingStrategy, as kuperator's e2e cases expect ("Exclude include
// pods", "Include pod with different pvc template", PersistentSequence).
import { describe, expect, it } from "vitest";
import type { CollaSet } from "../../../src/api/collaset.ts";
import type { PersistentVolumeClaim, Pod } from "../../../src/kube/objects.ts";
import { collaSet, ReconcilerHarness, withClaimTemplate } from "./reconciler-harness.ts";

const ID = "collaset.kusionstack.io/instance-id";
const ORPHANED = "collaset.kusionstack.io/orphaned";

function withClaims(replicas: number, scaleStrategy: CollaSet["spec"]["scaleStrategy"] = {}, namingStrategy?: CollaSet["spec"]["namingStrategy"]): CollaSet {
  const cls = withClaimTemplate(collaSet({ replicas }));
  cls.spec.scaleStrategy = scaleStrategy;
  if (namingStrategy !== undefined) cls.spec.namingStrategy = namingStrategy;
  return cls;
}

const settle = (harness: ReconcilerHarness) => harness.settle(20);
const lifecycle = { drainDelayMs: 0, stuckAfterMs: 60_000 };
const owned = (object: Pod | PersistentVolumeClaim | undefined) => (object?.metadata?.ownerReferences ?? []).some((reference) => reference.uid === "uid-collaset");
const members = (harness: ReconcilerHarness) => harness.pods.list("ns").filter((pod) => owned(pod) && pod.metadata?.deletionTimestamp == null);
const idOf = (object: Pod | PersistentVolumeClaim | undefined) => object?.metadata?.labels?.[ID];
const claimOf = (harness: ReconcilerHarness, pod: Pod) => harness.claims.get("ns", pod.spec?.volumes?.find((volume) => volume.name === "data")?.persistentVolumeClaim?.claimName ?? "");
const contextIds = (harness: ReconcilerHarness) => (harness.contexts.get("ns", "web")?.spec?.contexts ?? []).map((detail) => detail.id).sort();

describe("CollaSet reconciler: podToExclude and podToInclude", () => {
  it("lets an excluded pod and its claim go ownerless, frees its id, makes up the replicas, and takes it back with an id", async () => {
    const harness = new ReconcilerHarness({ lifecycle });
    harness.applyCollaSet(withClaims(2));
    await settle(harness);
    const leaving = members(harness).find((pod) => idOf(pod) === "0")!;
    const name = leaving.metadata!.name!;

    harness.applyCollaSet(withClaims(2, { podToExclude: [name] }));
    await settle(harness);
    const left = harness.pods.get("ns", name)!;
    expect(left.metadata?.deletionTimestamp).toBeUndefined();
    expect(left.metadata?.ownerReferences).toEqual([]);
    expect(left.metadata?.labels).toMatchObject({ [ORPHANED]: "true", [ID]: "0" });
    const leftClaim = claimOf(harness, left)!;
    expect(leftClaim.metadata?.ownerReferences).toEqual([]);
    expect(leftClaim.metadata?.labels?.[ORPHANED]).toBe("true");
    // The replicas made up by a new pod at the freed id, on a claim of its own; the orphaned claim is neither deleted nor adopted.
    expect(members(harness).map(idOf).sort()).toEqual(["0", "1"]);
    expect(claimOf(harness, members(harness).find((pod) => idOf(pod) === "0")!)?.metadata?.name).not.toBe(leftClaim.metadata?.name);
    expect(harness.claims.get("ns", leftClaim.metadata!.name!)).toBeDefined();
    expect(harness.events).toContainEqual(expect.objectContaining({ reason: "Excluded" }));

    harness.applyCollaSet(withClaims(3, { podToInclude: [name] }));
    await settle(harness);
    const back = harness.pods.get("ns", name)!;
    expect(owned(back)).toBe(true);
    expect(back.metadata?.labels?.[ORPHANED]).toBeUndefined();
    expect(idOf(back)).toBe("2");
    expect(owned(claimOf(harness, back))).toBe(true);
    expect(idOf(claimOf(harness, back))).toBe("2");
    // Joining made up the third replica: no pod was created for it.
    expect(members(harness)).toHaveLength(3);
    expect(contextIds(harness)).toEqual([0, 1, 2]);
  });

  it("refuses to take in a pod the selector does not match, with an Event and the status saying why", async () => {
    const harness = new ReconcilerHarness({ lifecycle });
    harness.applyCollaSet(withClaims(1));
    await settle(harness);
    harness.pods.upsert({ apiVersion: "v1", kind: "Pod", metadata: { name: "stranger", namespace: "ns", resourceVersion: "1", labels: { app: "other", "kusionstack.io/control": "true" } }, spec: { containers: [{ name: "app", image: "nginx" }] } });
    harness.applyCollaSet(withClaims(1, { podToInclude: ["stranger"] }));
    await settle(harness);
    expect(owned(harness.pods.get("ns", "stranger"))).toBe(false);
    const message = "pod stranger may not join: it does not match the CollaSet's selector";
    expect(harness.events).toContainEqual({ type: "Warning", reason: "IncludeNotAllowed", message });
    expect(harness.status("ns", "web")?.conditions?.find((condition) => condition.type === "ReplicaFailure")?.message).toContain(message);
  });

  it("answers a name in podToInclude without a pod (one included, then recreated, say) with a Warning Event only, as kube-xset does", async () => {
    const harness = new ReconcilerHarness({ lifecycle });
    harness.applyCollaSet(withClaims(1, { podToInclude: ["gone"] }));
    await settle(harness);
    expect(harness.events).toContainEqual({ type: "Warning", reason: "IncludeNotAllowed", message: "pod gone may not join: there is no such pod" });
    expect(harness.status("ns", "web")?.conditions?.find((condition) => condition.type === "ReplicaFailure")?.status).toBe("False");
  });
});

describe("CollaSet reconciler: namingStrategy", () => {
  it("PersistentSequence names pods <collaset>-<id>; a recreated pod gets its name back once the old one is gone", async () => {
    const harness = new ReconcilerHarness({ lifecycle });
    const cls = collaSet({ replicas: 2 });
    cls.spec.namingStrategy = { podNamingSuffixPolicy: "PersistentSequence" };
    harness.applyCollaSet(cls);
    await settle(harness);
    expect(members(harness).map((pod) => pod.metadata?.name).sort()).toEqual(["web-0", "web-1"]);

    // A change that recreates: web-0 goes first (maxUnavailable 1), then a new web-0 takes its place.
    const changed = structuredClone(cls);
    changed.spec.template.spec!.containers[0]!.env = [{ name: "MODE", value: "green" }];
    harness.applyCollaSet(changed);
    await settle(harness);
    const pods = members(harness);
    expect(pods.map((pod) => pod.metadata?.name).sort()).toEqual(["web-0", "web-1"]);
    expect(pods.every((pod) => pod.spec?.containers[0]?.env?.[0]?.value === "green")).toBe(true);
    expect(harness.writes.filter((write) => write.startsWith("pods.create") && write.includes("(failed)"))).toEqual([]);
  });

  it("PersistentSequence: a pod that left keeps its name, so its successor takes another id; taken back, it gets its id again", async () => {
    const harness = new ReconcilerHarness({ lifecycle });
    harness.applyCollaSet(withClaims(2, {}, { podNamingSuffixPolicy: "PersistentSequence" }));
    await settle(harness);
    harness.applyCollaSet(withClaims(2, { podToExclude: ["web-0"] }, { podNamingSuffixPolicy: "PersistentSequence" }));
    await settle(harness);
    expect(owned(harness.pods.get("ns", "web-0"))).toBe(false);
    expect(members(harness).map((pod) => pod.metadata?.name).sort()).toEqual(["web-1", "web-2"]);
    // web-2's claim is kept though id 2 is not the smallest free one.
    expect(harness.events.filter((event) => event.reason === "SuccessfulDeleteClaim")).toEqual([]);
    // Taken back, it gets the id its name says.
    harness.applyCollaSet(withClaims(3, { podToInclude: ["web-0"] }, { podNamingSuffixPolicy: "PersistentSequence" }));
    await settle(harness);
    expect(idOf(harness.pods.get("ns", "web-0"))).toBe("0");
    expect(members(harness).map((pod) => pod.metadata?.name).sort()).toEqual(["web-0", "web-1", "web-2"]);
  });

  it("Random (the default) lets the API server name pods", async () => {
    const harness = new ReconcilerHarness();
    harness.applyCollaSet(collaSet({ replicas: 1 }));
    await settle(harness);
    expect(members(harness)[0]?.metadata?.name).toMatch(/^web-\d+$/);
    expect(members(harness)[0]?.metadata?.generateName).toBe("web-");
  });
});
