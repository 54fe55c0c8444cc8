// Which pods leave and join a CollaSet (src/controller/collaset/in-exclude.ts), and how a pod that
// waits to leave holds back scale-in (sync-plan.ts), as kube-xset decides both.
import { describe, expect, it } from "vitest";
import type { CollaSet } from "../../../src/api/collaset.ts";
import { planInExclude, type InExcludePlan } from "../../../src/controller/collaset/in-exclude.ts";
import { planSync } from "../../../src/controller/collaset/sync-plan.ts";
import type { OwnerReference, PersistentVolumeClaim, Pod } from "../../../src/kube/objects.ts";
import { collaSet, pod, sources, template } from "./fixtures.ts";

const CONTROL = { "kusionstack.io/control": "true" };
const OWNER = { apiVersion: "apps.kusionstack.io/v1alpha1", kind: "CollaSet", name: "web", uid: "cls-uid", controller: true };

/** A pod of the CollaSet with the control label and, optionally, a claim volume. */
function member(name: string, id: number, options: { labels?: Record<string, string>; claim?: string } = {}): Pod {
  const made = pod(name, { id });
  made.metadata!.labels = { ...made.metadata!.labels, ...CONTROL, ...options.labels };
  if (options.claim !== undefined) made.spec!.volumes = [{ name: "data", persistentVolumeClaim: { claimName: options.claim } }];
  return made;
}

/** A pod no one controls (left a CollaSet, or made by hand). */
function stray(name: string, options: { labels?: Record<string, string>; claim?: string; owner?: OwnerReference } = {}): Pod {
  const made = member(name, 7, options);
  made.metadata!.ownerReferences = options.owner === undefined ? [] : [options.owner];
  return made;
}

function claim(name: string, labels: Record<string, string> = { app: "web", ...CONTROL }, owned = true): PersistentVolumeClaim {
  return { apiVersion: "v1", kind: "PersistentVolumeClaim", metadata: { name, namespace: "shop", labels, resourceVersion: "3", ...(owned ? { ownerReferences: [OWNER] } : {}) }, spec: {} };
}

function decide(cls: CollaSet, owned: Pod[], options: { others?: Pod[]; claims?: PersistentVolumeClaim[]; occupied?: number[] } = {}): InExcludePlan {
  const all = [...owned, ...(options.others ?? [])];
  return planInExclude({
    collaSet: cls,
    owned,
    pod: (name) => all.find((item) => item.metadata?.name === name),
    claim: (name) => options.claims?.find((item) => item.metadata?.name === name),
    occupied: new Set(options.occupied ?? owned.map((item) => Number(item.metadata?.labels?.["collaset.kusionstack.io/instance-id"]))),
  });
}

const names = (entries: readonly { pod: Pod }[]) => entries.map((entry) => entry.pod.metadata?.name);

describe("planInExclude: leaving", () => {
  it("lets a pod named in podToExclude leave with its claims, and one labelled to-exclude", () => {
    const plan = decide(collaSet({ scaleStrategy: { podToExclude: ["a"] } }), [member("a", 0, { claim: "data-a" }), member("b", 1, { labels: { "collaset.kusionstack.io/to-exclude": "true" } }), member("c", 2)], { claims: [claim("data-a")] });
    expect(names(plan.exclude)).toEqual(["a", "b"]);
    expect(plan.exclude[0]!.claims.map((item) => item.metadata?.name)).toEqual(["data-a"]);
    expect(plan.refusals).toEqual([]);
  });

  it("refuses a pod without kusionstack.io/control, or whose claim another object controls, and says why", () => {
    const bare = pod("a", { id: 0 });
    const foreignClaim = claim("data-b", { app: "web", ...CONTROL }, false);
    foreignClaim.metadata!.ownerReferences = [{ apiVersion: "apps/v1", kind: "StatefulSet", name: "db", uid: "db-uid", controller: true }];
    const plan = decide(collaSet({ scaleStrategy: { podToExclude: ["a", "b"] } }), [bare, member("b", 1, { claim: "data-b" })], { claims: [foreignClaim] });
    expect(plan.exclude).toEqual([]);
    expect(plan.refusals.map(({ reason, message }) => ({ reason, message }))).toEqual([
      { reason: "ExcludeNotAllowed", message: 'pod a may not leave: it is not controlled by kusionstack system (label kusionstack.io/control: "true" missing)' },
      { reason: "ExcludeNotAllowed", message: "pod b may not leave: its claim data-b is not controlled by this CollaSet" },
    ]);
  });

  it("lets a pod in a replace, or to be deleted, leave only once that is over (it waits)", () => {
    const origin = member("a", 0, { labels: { "collaset.kusionstack.io/to-replace": "true", "collaset.kusionstack.io/replace-pair-new-id": "3" } });
    const surge = member("d", 3, { labels: { "collaset.kusionstack.io/replace-pair-origin-name": "a" } });
    const plan = decide(collaSet({ scaleStrategy: { podToExclude: ["a", "d", "b"], podToDelete: ["b"] } }), [origin, member("b", 1), surge]);
    expect(plan.exclude).toEqual([]);
    expect([...plan.waiting].sort()).toEqual(["a", "b", "d"]);
  });

  it("does neither for a name both to exclude and to include, and says so", () => {
    const plan = decide(collaSet({ scaleStrategy: { podToExclude: ["a", "gone"], podToInclude: ["a", "gone"] } }), [member("a", 0)]);
    expect(plan.exclude).toEqual([]);
    expect(plan.include).toEqual([]);
    expect(plan.refusals).toEqual([{ reason: "DupExIncludedTarget", message: "pods a, gone are both to exclude and to include: neither is done" }]);
  });
});

describe("planInExclude: joining", () => {
  it("adopts a stray pod with the control label that the selector matches, with its claims, at the smallest free id", () => {
    const plan = decide(collaSet({ scaleStrategy: { podToInclude: ["x"] } }), [member("a", 0), member("c", 2)], {
      others: [stray("x", { claim: "data-x", labels: { "collaset.kusionstack.io/orphaned": "true" } })],
      claims: [claim("data-x", { app: "web", ...CONTROL, "collaset.kusionstack.io/orphaned": "true" }, false)],
    });
    expect(plan.include.map(({ pod: joining, instanceId, claims }) => ({ name: joining.metadata?.name, instanceId, claims: claims.map((item) => item.metadata?.name) }))).toEqual([{ name: "x", instanceId: 1, claims: ["data-x"] }]);
  });

  it("gives two joining pods distinct ids that no other owner holds", () => {
    const plan = decide(collaSet({ scaleStrategy: { podToInclude: ["x", "y"] } }), [member("a", 0)], { others: [stray("x"), stray("y")], occupied: [0, 1] });
    expect(plan.include.map((entry) => entry.instanceId)).toEqual([2, 3]);
  });

  it("refuses a pod another controller owns, one the selector does not match, one without the control label, one that does not exist", () => {
    const owned = stray("x", { owner: { apiVersion: "apps/v1", kind: "ReplicaSet", name: "rs", uid: "rs-uid", controller: true } });
    const elsewhere = stray("y", { labels: { app: "other" } });
    const bare = stray("z");
    delete bare.metadata!.labels!["kusionstack.io/control"];
    const plan = decide(collaSet({ scaleStrategy: { podToInclude: ["x", "y", "z", "nope"] } }), [], { others: [owned, elsewhere, bare] });
    expect(plan.include).toEqual([]);
    expect(plan.refusals.map((refusal) => refusal.message)).toEqual([
      "pod x may not join: it is controlled by ReplicaSet rs",
      "pod y may not join: it does not match the CollaSet's selector",
      'pod z may not join: it is not controlled by kusionstack system (label kusionstack.io/control: "true" missing)',
      "pod nope may not join: there is no such pod",
    ]);
    expect(plan.refusals.every((refusal) => refusal.reason === "IncludeNotAllowed")).toBe(true);
  });

  it("refuses a pod whose claim another CollaSet still controls", () => {
    const held = claim("data-x", { app: "web", ...CONTROL }, false);
    held.metadata!.ownerReferences = [{ ...OWNER, name: "other", uid: "other-uid" }];
    const plan = decide(collaSet({ scaleStrategy: { podToInclude: ["x"] } }), [], { others: [stray("x", { claim: "data-x" })], claims: [held] });
    expect(plan.refusals.map((refusal) => refusal.message)).toEqual(["pod x may not join: its claim data-x is controlled by CollaSet other"]);
  });
});

describe("planSync with pods waiting to leave", () => {
  const plan = (cls: CollaSet, pods: Pod[], excluding: string[]) =>
    planSync({ collaSet: cls, nowMs: 0, updatedRevision: "web-r1", currentRevision: undefined, pods, sources: sources({ "web-r1": template() }), decorationTargets: () => new Map(), excluding: new Set(excluding) });

  it("does not scale in a pod waiting to leave, and it holds back one scale-in (kube-xset getTargetsToDelete)", () => {
    const pods = [pod("a", { id: 0 }), pod("b", { id: 1 }), pod("c", { id: 2 })];
    expect(plan(collaSet({ replicas: 2 }), pods, ["a"]).actions.filter((action) => action.kind === "delete")).toEqual([]);
    expect(plan(collaSet({ replicas: 1 }), pods, ["a"]).actions.flatMap((action) => (action.kind === "delete" ? [action.pod.metadata?.name] : []))).toEqual(["c"]);
  });

  it("keeps an origin whose surge pod waits to leave, and so the surge pod, holding back the scale-in", () => {
    const origin = pod("a", { id: 2 });
    origin.metadata!.labels = { ...origin.metadata!.labels, "collaset.kusionstack.io/to-replace": "true" };
    const surge = pod("d", { id: 3, ready: false });
    surge.metadata!.labels = { ...surge.metadata!.labels, "collaset.kusionstack.io/replace-pair-origin-name": "a" };
    const deleted = (excluding: string[]) => plan(collaSet({ replicas: 1 }), [origin, pod("b", { id: 1 }), surge], excluding).actions.flatMap((action) => (action.kind === "delete" ? [action.pod.metadata?.name] : []));
    expect(deleted([])).toEqual(["a", "d"]);
    expect(deleted(["d"])).toEqual([]);
  });
});
