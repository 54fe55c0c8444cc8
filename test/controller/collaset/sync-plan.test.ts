import { describe, expect, it } from "vitest";
import type { CollaSet } from "../../../src/api/collaset.ts";
import { RECREATE_FINALIZER } from "../../../src/controller/collaset/pod-state.ts";
import { planSync, type Action, type SyncPlan } from "../../../src/controller/collaset/sync-plan.ts";
import { resolveMaxUnavailable } from "../../../src/api/max-unavailable.ts";
import type { Pod } from "../../../src/kube/objects.ts";
import { decorationTargets } from "../../../src/controller/decoration-targets.ts";
import { recordedRevisions } from "../../../src/decoration/recording.ts";
import { collaSet, pod, podDecoration, sidecarRevision, sources, template } from "./fixtures.ts";

const revisions = sources(
  { "web-r1": template("nginx:1.27"), "web-r2": template("nginx:1.28"), "web-r3": template("nginx:1.27", "green") },
  [sidecarRevision("logging", "l1", "fluent-bit:1"), sidecarRevision("logging", "l2", "fluent-bit:2")],
);

interface PlanOptions {
  updated?: string;
  current?: string;
  /** Decoration targets by slot name; slots not listed get none. */
  decorations?: Record<string, Record<string, string>>;
}

function plan(cls: CollaSet, pods: Pod[], options: PlanOptions = {}): SyncPlan {
  return planSync({
    collaSet: cls,
    nowMs: 0,
    updatedRevision: options.updated ?? "web-r1",
    currentRevision: options.current,
    pods,
    sources: revisions,
    decorationTargets: (slots) => new Map(slots.map((slot) => [slot.name, new Map(Object.entries(options.decorations?.[slot.name] ?? {}))])),
  });
}

/** One line per action, for readable expectations. */
function summary(actions: readonly Action[]): string[] {
  return actions.map((action) => {
    switch (action.kind) {
      case "create":
        return `create ${action.instanceId}${action.replacing === undefined ? "" : ` replacing ${action.replacing.metadata?.name ?? ""}`}`;
      case "label":
        return `label ${action.pod.metadata?.name ?? ""} ${action.instanceId}`;
      default:
        return `${action.kind} ${action.pod.metadata?.name ?? ""}`;
    }
  });
}

function createdPod(actions: readonly Action[]) {
  const action = actions[0];
  return action?.kind === "create" ? action.pod : undefined;
}

const sidecarImages = { "logging-sidecar": "fluent-bit:1", app: "nginx:1.27" };

describe("planSync: scaling", () => {
  it("creates the missing pods at the smallest free instance ids", () => {
    const result = plan(collaSet({ replicas: 4 }), [pod("a", { id: 0 }), pod("c", { id: 2 })]);
    expect(summary(result.actions)).toEqual(["create 1", "create 3"]);
    const created = createdPod(result.actions);
    expect(created?.metadata?.labels?.["collaset.kusionstack.io/instance-id"]).toBe("1");
  });

  it("gives the id of a pod on its way out to the next pod at once, as kube-xset does, so a scaled-in id that returns finds its claims", () => {
    expect(summary(plan(collaSet({ replicas: 2 }), [pod("a", { id: 0 }), pod("b", { id: 1, terminating: true })]).actions)).toEqual(["create 1"]);
  });

  it("under PersistentSequence, keeps the id of a pod on its way out: its name is the id, and the old pod holds it until it is gone", () => {
    const cls = collaSet({ replicas: 2, namingStrategy: { podNamingSuffixPolicy: "PersistentSequence" } });
    expect(summary(plan(cls, [pod("web-0", { id: 0 }), pod("web-1", { id: 1, terminating: true })]).actions)).toEqual([]);
  });

  it("scales in podToDelete first, then the highest ids", () => {
    const pods = [pod("a", { id: 0 }), pod("b", { id: 1 }), pod("c", { id: 2 }), pod("d", { id: 3 })];
    expect(summary(plan(collaSet({ replicas: 2, scaleStrategy: { podToDelete: ["a"] } }), pods).actions)).toEqual(["delete a", "delete d"]);
  });

  it("scales in a pod already leaving traffic for a scale-in before the highest id", () => {
    const leaving = pod("a", { id: 0 });
    leaving.metadata!.labels!["operation-type.podopslifecycle.kusionstack.io/collaset"] = "scale-in";
    expect(summary(plan(collaSet({ replicas: 2 }), [leaving, pod("b", { id: 1 }), pod("c", { id: 2 })]).actions)).toEqual(["delete a"]);
  });

  it("replaces a pod in podToDelete while replicas stay", () => {
    const pods = [pod("a", { id: 0 }), pod("b", { id: 1 })];
    // The pod is still live in this sync and holds its id, so its replacement takes the next one.
    expect(summary(plan(collaSet({ replicas: 2, scaleStrategy: { podToDelete: ["a"] } }), pods).actions)).toEqual(["create 2", "delete a"]);
  });

  it("deletes a pod labelled collaset.kusionstack.io/to-delete (kube-api's PodDeletionIndicationLabelKey) and makes a new one while replicas stay", () => {
    const labelled = pod("a", { id: 0 });
    labelled.metadata!.labels!["collaset.kusionstack.io/to-delete"] = "true";
    const result = plan(collaSet({ replicas: 2 }), [labelled, pod("b", { id: 1 })]);
    expect(summary(result.actions)).toEqual(["create 2", "delete a"]);
    expect(result.actions[1]).toMatchObject({ reason: "it carries the label collaset.kusionstack.io/to-delete" });
  });

  it("gives owned pods without an id, or with a duplicate one, a free id before anything else", () => {
    const pods = [pod("a", { id: 0, createdAt: "2026-11-01T00:00:00Z" }), pod("b", { id: 0, createdAt: "2026-11-01T00:00:01Z" }), pod("c", { createdAt: "2026-11-01T00:00:02Z" })];
    expect(summary(plan(collaSet({ replicas: 1 }), pods).actions)).toEqual(["label b 1", "label c 2"]);
  });

  it("changes nothing while paused, but finishes a replacement in flight", () => {
    const pods = [pod("a", { id: 0 }), pod("b", { id: 1, terminating: true, finalizers: [RECREATE_FINALIZER] })];
    expect(summary(plan(collaSet({ replicas: 5, paused: true }), pods, { updated: "web-r2" }).actions)).toEqual(["create 1 replacing b"]);
  });
});

describe("planSync: replacements", () => {
  it("creates the replacement of a pod deleted for recreation with what the slot should carry, then lets the old pod go", () => {
    const held = pod("b", { id: 1, terminating: true, finalizers: [RECREATE_FINALIZER], decorations: { logging: "l1" }, images: sidecarImages });
    const first = plan(collaSet({ replicas: 2 }), [pod("a", { id: 0 }), held], { decorations: { b: { logging: "l1" } } });
    expect(summary(first.actions)).toEqual(["create 1 replacing b"]);
    const replacement = createdPod(first.actions);
    expect(replacement?.spec?.containers.map((container) => container.image)).toEqual(["fluent-bit:1", "nginx:1.27"]);

    const after = plan(collaSet({ replicas: 2 }), [pod("a", { id: 0 }), held, pod("b2", { id: 1, decorations: { logging: "l1" }, images: sidecarImages })], { decorations: { b2: { logging: "l1" } } });
    expect(summary(after.actions)).toEqual(["release b"]);
  });

  it("lets go of a pod awaiting replacement whose slot is scaled away", () => {
    const held = pod("b", { id: 1, terminating: true, finalizers: [RECREATE_FINALIZER] });
    expect(summary(plan(collaSet({ replicas: 1 }), [pod("a", { id: 0 }), held]).actions)).toEqual(["release b"]);
  });
});

describe("planSync: updates", () => {
  const three = () => [pod("a", { id: 0 }), pod("b", { id: 1 }), pod("c", { id: 2 })];

  it("updates an image in place, at most maxUnavailable pods at once", () => {
    const result = plan(collaSet({ updateStrategy: { rollingUpdate: { maxUnavailable: 2 } } }), three(), { updated: "web-r2" });
    expect(summary(result.actions)).toEqual(["in-place a", "in-place b"]);
  });

  it("updates one pod at a time when maxUnavailable is unset (kuperator: every pod at once, its \"finish update if out of partition\")", () => {
    expect(summary(plan(collaSet(), three(), { updated: "web-r2" }).actions)).toEqual(["in-place a"]);
  });

  it("counts pods already unavailable against the budget, and updates unavailable pods for free", () => {
    const pods = [pod("a", { id: 0 }), pod("b", { id: 1, ready: false }), pod("c", { id: 2 })];
    expect(summary(plan(collaSet(), pods, { updated: "web-r2" }).actions)).toEqual(["in-place b"]);
    const updating = [pod("a", { id: 0, template: "web-r2", images: { app: "nginx:1.28" }, running: { app: "nginx:1.27" } }), pod("b", { id: 1 }), pod("c", { id: 2 })];
    expect(summary(plan(collaSet(), updating, { updated: "web-r2" }).actions)).toEqual([]);
  });

  it("recreates when more than images change, and always under the Recreate policy", () => {
    expect(summary(plan(collaSet(), three(), { updated: "web-r3" }).actions)).toEqual(["recreate a"]);
    expect(summary(plan(collaSet({ updateStrategy: { podUpgradePolicy: "Recreate" } }), three(), { updated: "web-r2" }).actions)).toEqual(["recreate a"]);
  });

  it("recreates a pod that records no template revision of the CollaSet (one that joined by podToInclude), saying so", () => {
    const joined = pod("a", { id: 0 });
    delete joined.metadata!.labels!["controller-revision-hash"];
    const result = plan(collaSet({ replicas: 1 }), [joined]);
    expect(summary(result.actions)).toEqual(["recreate a"]);
    expect(result.actions[0]).toMatchObject({ reason: "it records no template revision of the CollaSet" });
  });

  it("blocks instead of recreating under InPlaceOnly", () => {
    const result = plan(collaSet({ updateStrategy: { podUpgradePolicy: "InPlaceOnly" } }), three(), { updated: "web-r3" });
    expect(result.actions).toEqual([]);
    expect(result.blocked).toHaveLength(3);
    expect(result.blocked[0]).toContain("InPlaceOnly");
  });

  it("keeps the last `partition` pods on their template revision", () => {
    const cls = collaSet({ updateStrategy: { rollingUpdate: { maxUnavailable: 3, byPartition: { partition: 2 } } } });
    expect(summary(plan(cls, three(), { updated: "web-r2" }).actions)).toEqual(["in-place a"]);
  });

  it("with rollingUpdate.byLabel, moves only the pods labelled collaset.kusionstack.io/update-included to the new template", () => {
    const cls = collaSet({ updateStrategy: { rollingUpdate: { maxUnavailable: 3, byLabel: {} } } });
    expect(summary(plan(cls, three(), { updated: "web-r2" }).actions)).toEqual([]);
    const pods = three();
    pods[1]!.metadata!.labels!["collaset.kusionstack.io/update-included"] = "true";
    expect(summary(plan(cls, pods, { updated: "web-r2" }).actions)).toEqual(["in-place b"]);
  });

  it("holds back a pod that records no template revision (one that joined by podToInclude) like any pod the partition covers", () => {
    const joined = pod("c", { id: 2 });
    delete joined.metadata!.labels!["controller-revision-hash"];
    const pods = [pod("a", { id: 0, template: "web-r2", images: { app: "nginx:1.28" } }), pod("b", { id: 1, template: "web-r2", images: { app: "nginx:1.28" } }), joined];
    const held = plan(collaSet({ updateStrategy: { rollingUpdate: { byPartition: { partition: 3 } } } }), pods, { updated: "web-r2", current: "web-r1" });
    expect(summary(held.actions)).toEqual([]);
    expect(held.waiting).toEqual([]);
    const reached = plan(collaSet({ updateStrategy: { rollingUpdate: { byPartition: { partition: 0 } } } }), pods, { updated: "web-r2", current: "web-r1" });
    expect(summary(reached.actions)).toEqual(["recreate c"]);
    expect(reached.actions[0]).toMatchObject({ reason: "it records no template revision of the CollaSet" });
  });

  it("with rollingUpdate.byLabel, leaves a pod that records no template revision alone until it is labelled", () => {
    const joined = pod("a", { id: 0 });
    delete joined.metadata!.labels!["controller-revision-hash"];
    const cls = collaSet({ replicas: 1, updateStrategy: { rollingUpdate: { byLabel: {} } } });
    expect(summary(plan(cls, [joined], { updated: "web-r2" }).actions)).toEqual([]);
    joined.metadata!.labels!["collaset.kusionstack.io/update-included"] = "true";
    expect(summary(plan(cls, [joined], { updated: "web-r2" }).actions)).toEqual(["recreate a"]);
  });

  it("makes new pods held back by the partition from the current revision", () => {
    const cls = collaSet({ replicas: 2, updateStrategy: { rollingUpdate: { byPartition: { partition: 1 } } } });
    const result = plan(cls, [pod("a", { id: 0, template: "web-r2", images: { app: "nginx:1.28" } })], { updated: "web-r2", current: "web-r1" });
    expect(summary(result.actions)).toEqual(["create 1"]);
    const created = createdPod(result.actions);
    expect(created?.metadata?.labels?.["controller-revision-hash"]).toBe("web-r1");
  });

  it("moves decorations by their own targets, independently of the template", () => {
    const pods = [pod("a", { id: 0, decorations: { logging: "l1" }, images: sidecarImages }), pod("b", { id: 1 }), pod("c", { id: 2 })];
    const cls = collaSet({ updateStrategy: { rollingUpdate: { maxUnavailable: 3 } } });
    const result = plan(cls, pods, { decorations: { a: { logging: "l2" }, b: { logging: "l2" } } });
    // a changes its sidecar image (in place); b gains a container (recreate); c stays as it is.
    expect(summary(result.actions)).toEqual(["in-place a", "recreate b"]);
  });

  it("judges a pod by what it runs: one that records the updated revision but runs the old sidecar gets the new one in place", () => {
    // Its author rewrote the record to claim l2 while the pod runs l1's image (fluent-bit:1).
    const pinned = pod("a", { id: 0, decorations: { logging: "l2" }, images: sidecarImages });
    const result = plan(collaSet({ replicas: 1 }), [pinned], { decorations: { a: { logging: "l2" } } });
    expect(summary(result.actions)).toEqual(["in-place a"]);
    const update = result.actions[0];
    expect(update?.kind === "in-place" ? update.operations : []).toContainEqual({ op: "replace", path: "/spec/containers/0/image", value: "fluent-bit:2" });
    // The honest record of the same pod is left alone.
    expect(plan(collaSet({ replicas: 1 }), [pod("a", { id: 0, decorations: { logging: "l2" }, images: { ...sidecarImages, "logging-sidecar": "fluent-bit:2" } })], { decorations: { a: { logging: "l2" } } }).actions).toEqual([]);
  });

  it("waits for a revision that is not stored yet rather than guess", () => {
    const result = plan(collaSet(), three(), { decorations: { a: { logging: "l9" } } });
    expect(result.actions).toEqual([]);
    expect(result.blocked).toEqual([]);
    expect(result.waiting[0]).toMatch(/^pod a: waiting for the revisions .*logging@l9/);
  });
});

describe("resolveMaxUnavailable", () => {
  it("takes a count or a percentage of replicas rounded down, never less than one", () => {
    expect(resolveMaxUnavailable(undefined, 10)).toBe(1);
    expect(resolveMaxUnavailable(3, 10)).toBe(3);
    expect(resolveMaxUnavailable("25%", 10)).toBe(2);
    expect(resolveMaxUnavailable("5%", 10)).toBe(1);
  });
});

describe("planSync with the decorations' own rollouts", () => {
  // The real targets: a decoration with partition 2 over the CollaSet's pods alone.
  const partitioned = podDecoration("logging", { updateStrategy: { rollingUpdate: { partition: 2 } } });
  function planWithDecoration(pods: Pod[]): SyncPlan {
    return planSync({
      nowMs: 0,
      collaSet: collaSet({ updateStrategy: { rollingUpdate: { maxUnavailable: 3 } } }),
      updatedRevision: "web-r1",
      currentRevision: "web-r1",
      pods,
      sources: revisions,
      decorationTargets: (slots) => decorationTargets({ namespace: "shop", decorations: [partitioned], updatedRevision: () => "l1", otherPods: () => [], recorded: recordedRevisions, slots }),
    });
  }

  it("moves the same pod while its replacement is made, when no pod is ready", () => {
    const first = planWithDecoration([pod("a", { id: 0, ready: false }), pod("b", { id: 1, ready: false }), pod("c", { id: 2, ready: false })]);
    expect(summary(first.actions)).toEqual(["recreate a"]);
    // a is deleted and held by the finalizer, not ready: it is still the one that moves.
    const awaiting = pod("a", { id: 0, ready: false, terminating: true, finalizers: [RECREATE_FINALIZER] });
    const second = planWithDecoration([awaiting, pod("b", { id: 1, ready: false }), pod("c", { id: 2, ready: false })]);
    expect(summary(second.actions)).toEqual(["create 0 replacing a"]);
    expect(createdPod(second.actions)?.spec?.containers.map((container) => container.name)).toEqual(["logging-sidecar", "app"]);
  });
});

describe("planSync: KusionStack's policy names", () => {
  it("recreates under ReCreate, as under Recreate", () => {
    const result = plan(collaSet({ updateStrategy: { podUpgradePolicy: "ReCreate" } }), [pod("a", { id: 0 }), pod("b", { id: 1 }), pod("c", { id: 2 })], { updated: "web-r2" });
    expect(summary(result.actions)).toEqual(["recreate a"]);
  });
});

describe("planSync: replace (kube-api's to-replace label, podUpgradePolicy Replace)", () => {
  const labelled = (name: string, id: number, labels: Record<string, string>, options: Parameters<typeof pod>[1] = {}) => {
    const made = pod(name, { id, ...options });
    Object.assign(made.metadata!.labels!, labels);
    return made;
  };
  const TO_REPLACE = "collaset.kusionstack.io/to-replace";
  const ORIGIN = "collaset.kusionstack.io/replace-pair-origin-name";
  const NEW_ID = "collaset.kusionstack.io/replace-pair-new-id";
  const BY_UPDATE = "collaset.kusionstack.io/replaced-by-replace-update";

  it("makes a surge pod with an id of its own and the origin's name, of the origin's revision; scales nothing for it", () => {
    const result = plan(collaSet({ replicas: 2 }), [labelled("a", 0, { [TO_REPLACE]: "true" }), pod("b", { id: 1 })]);
    expect(summary(result.actions)).toEqual(["create 2"]);
    const surge = createdPod(result.actions)!;
    expect(surge.metadata?.labels).toMatchObject({ [ORIGIN]: "a", "collaset.kusionstack.io/instance-id": "2", "controller-revision-hash": "web-r1" });
  });

  it("labels the origin with its surge pod's id, deletes the origin once the surge pod serves, then clears the pair's labels", () => {
    const origin = labelled("a", 0, { [TO_REPLACE]: "true" });
    const starting = labelled("s", 2, { [ORIGIN]: "a" }, { ready: false });
    const waiting = plan(collaSet({ replicas: 1 }), [origin, starting]);
    expect(summary(waiting.actions)).toEqual(["relabel a"]);
    expect(waiting.actions[0]).toMatchObject({ set: { [NEW_ID]: "2" }, remove: [] });

    const serving = plan(collaSet({ replicas: 1 }), [labelled("a", 0, { [TO_REPLACE]: "true", [NEW_ID]: "2" }), labelled("s", 2, { [ORIGIN]: "a" })]);
    expect(summary(serving.actions)).toEqual(["delete a"]);

    const finished = plan(collaSet({ replicas: 1 }), [labelled("s", 2, { [ORIGIN]: "a" })]);
    expect(summary(finished.actions)).toEqual(["relabel s"]);
    expect(finished.actions[0]).toMatchObject({ set: {}, remove: [ORIGIN] });
  });

  it("cancels when to-replace is removed: a surge pod not serving yet is deleted, one that serves stays", () => {
    const origin = labelled("a", 0, { [NEW_ID]: "2" });
    expect(summary(plan(collaSet({ replicas: 1 }), [origin, labelled("s", 2, { [ORIGIN]: "a" }, { ready: false })]).actions)).toEqual(["delete s"]);
    expect(summary(plan(collaSet({ replicas: 1 }), [origin, labelled("s", 2, { [ORIGIN]: "a" })]).actions)).toEqual([]);
  });

  it("deletes the surge pod with its origin on scale-in; a surge pod named in podToDelete waits for its replace to finish", () => {
    const pair = () => [labelled("a", 0, { [TO_REPLACE]: "true", [NEW_ID]: "2" }), labelled("s", 2, { [ORIGIN]: "a" }, { ready: false })];
    expect(summary(plan(collaSet({ replicas: 0 }), pair()).actions)).toEqual(["delete a", "delete s"]);
    expect(summary(plan(collaSet({ replicas: 0, scaleStrategy: { podToDelete: ["a"] } }), pair()).actions)).toEqual(["delete a", "delete s"]);
    expect(summary(plan(collaSet({ replicas: 1, scaleStrategy: { podToDelete: ["s"] } }), pair()).actions)).toEqual([]);
  });

  it("under podUpgradePolicy Replace, asks for a replace of the new revision, as many as maxUnavailable allows", () => {
    const result = plan(collaSet({ updateStrategy: { podUpgradePolicy: "Replace" } }), [pod("a", { id: 0 }), pod("b", { id: 1 }), pod("c", { id: 2 })], { updated: "web-r2" });
    expect(summary(result.actions)).toEqual(["relabel a"]);
    expect(result.actions[0]).toMatchObject({ set: { [TO_REPLACE]: expect.any(String) as unknown, [BY_UPDATE]: "web-r2" } });
    // A replace whose surge pod does not serve yet holds the budget.
    const busy = plan(collaSet({ replicas: 2, updateStrategy: { podUpgradePolicy: "Replace" } }), [labelled("a", 0, { [TO_REPLACE]: "1", [BY_UPDATE]: "web-r2", [NEW_ID]: "3" }), pod("b", { id: 1 }), labelled("s", 3, { [ORIGIN]: "a" }, { template: "web-r2", images: { app: "nginx:1.28" }, ready: false })], { updated: "web-r2" });
    expect(summary(busy.actions)).toEqual([]);
  });

  it("follows a newer revision: the origin's replace is retargeted and a surge pod of the older one deleted", () => {
    const pods = [labelled("a", 0, { [TO_REPLACE]: "1", [BY_UPDATE]: "web-r2", [NEW_ID]: "3" }), labelled("s", 3, { [ORIGIN]: "a" }, { template: "web-r2", images: { app: "nginx:1.28" }, ready: false })];
    const result = plan(collaSet({ replicas: 1, updateStrategy: { podUpgradePolicy: "Replace" } }), pods, { updated: "web-r3" });
    expect(summary(result.actions)).toEqual(["relabel a"]);
    expect(result.actions[0]).toMatchObject({ set: { [BY_UPDATE]: "web-r3" } });
    const retargeted = [labelled("a", 0, { [TO_REPLACE]: "1", [BY_UPDATE]: "web-r3", [NEW_ID]: "3" }), pods[1]!];
    expect(summary(plan(collaSet({ replicas: 1, updateStrategy: { podUpgradePolicy: "Replace" } }), retargeted, { updated: "web-r3" }).actions)).toEqual(["delete s"]);
  });
});

describe("planSync: a template update reaching a pod being replaced by label (kube-xset updateReplaceOriginTarget)", () => {
  const TO_REPLACE = "collaset.kusionstack.io/to-replace";
  const ORIGIN = "collaset.kusionstack.io/replace-pair-origin-name";
  const NEW_ID = "collaset.kusionstack.io/replace-pair-new-id";
  const BY_UPDATE = "collaset.kusionstack.io/replaced-by-replace-update";
  const origin = (labels: Record<string, string>) => {
    const made = pod("a", { id: 0, ready: false });
    Object.assign(made.metadata!.labels!, { [TO_REPLACE]: "true", [NEW_ID]: "1", ...labels });
    return made;
  };
  const oldSurge = () => {
    const made = pod("s", { id: 1, ready: false });
    made.metadata!.labels![ORIGIN] = "a";
    return made;
  };

  it("turns the replace into one by update of the new revision, under every podUpgradePolicy", () => {
    for (const policy of ["Recreate", "InPlaceIfPossible", "Replace"] as const) {
      const result = plan(collaSet({ replicas: 1, updateStrategy: { podUpgradePolicy: policy } }), [origin({}), oldSurge()], { updated: "web-r2" });
      expect(summary(result.actions), policy).toEqual(["relabel a"]);
      expect(result.actions[0], policy).toMatchObject({ set: { [BY_UPDATE]: "web-r2" } });
    }
  });

  it("then deletes the surge pod of the old revision and makes one of the new", () => {
    const retargeted = origin({ [BY_UPDATE]: "web-r2" });
    expect(summary(plan(collaSet({ replicas: 1 }), [retargeted, oldSurge()], { updated: "web-r2" }).actions)).toEqual(["delete s"]);
    const result = plan(collaSet({ replicas: 1 }), [retargeted], { updated: "web-r2" });
    expect(summary(result.actions)).toEqual(["create 1", "relabel a"]);
    expect(createdPod(result.actions)?.metadata?.labels).toMatchObject({ [ORIGIN]: "a", "controller-revision-hash": "web-r2" });
    expect(createdPod(result.actions)?.spec?.containers[0]?.image).toBe("nginx:1.28");
  });

  it("leaves a replace by label alone while the partition holds its pod back", () => {
    const cls = collaSet({ replicas: 1, updateStrategy: { rollingUpdate: { byPartition: { partition: 1 } } } });
    expect(summary(plan(cls, [origin({}), oldSurge()], { updated: "web-r2", current: "web-r1" }).actions)).toEqual([]);
  });
});

describe("planSync: one delay before operating (DESIGN §6)", () => {
  const lifecycle = (nowMs: number) => ({ nowMs, drainDelayMs: 5000, stuckAfterMs: 600_000 });
  // Out of traffic since t=0 (an update begun, its gate False, the kubelet marked it not Ready).
  const drained = (labels: Record<string, string> = {}) => {
    const made = pod("a", { id: 0, ready: false });
    Object.assign(made.metadata!.labels!, {
      "operating.podopslifecycle.kusionstack.io/collaset": "1",
      "operation-type.podopslifecycle.kusionstack.io/collaset": "update",
      "pre-checked.podopslifecycle.kusionstack.io/collaset": "1",
      "operation-permission.podopslifecycle.kusionstack.io/update": "1",
      "preparing.podopslifecycle.kusionstack.io/collaset": "1",
      "kusionstack.io/control": "true",
      ...labels,
    });
    made.spec!.readinessGates = [{ conditionType: "pod.kusionstack.io/service-ready" }];
    made.status!.conditions = [{ type: "Ready", status: "False", lastTransitionTime: "1970-01-01T00:00:00Z" }, { type: "pod.kusionstack.io/service-ready", status: "False" }];
    return made;
  };
  const planAt = (cls: CollaSet, pods: Pod[], nowMs: number) => planSync({
    collaSet: cls,
    nowMs,
    updatedRevision: "web-r2",
    currentRevision: "web-r1",
    pods,
    sources: revisions,
    lifecycle: lifecycle(nowMs),
    decorationTargets: (slots) => new Map(slots.map((slot) => [slot.name, new Map()])),
  });

  it("without operationDelaySeconds, operates once the drain delay has passed", () => {
    expect(summary(planAt(collaSet({ replicas: 1 }), [drained()], 2000).actions)).toEqual([]);
    expect(summary(planAt(collaSet({ replicas: 1 }), [drained()], 6000).actions)).toEqual(["in-place a"]);
  });

  it("with operationDelaySeconds, allows the operation as soon as the pod is drained and operates that long after, with no drain delay before", () => {
    const cls = collaSet({ replicas: 1, updateStrategy: { operationDelaySeconds: 10 } });
    const allowed = planAt(cls, [drained()], 1500);
    expect(summary(allowed.actions)).toEqual(["permit-operation a"]);
    const permitted = drained({ "operate.podopslifecycle.kusionstack.io/collaset": String(1500n * 1_000_000n) });
    expect(summary(planAt(cls, [permitted], 9000).actions)).toEqual([]);
    expect(summary(planAt(cls, [permitted], 11_500).actions)).toEqual(["in-place a"]);
  });

  it("an OperationJob's operationDelaySeconds for a pod is the one delay of its operation, in place of the CollaSet's or the drain delay", () => {
    const planWith = (delayMs: number | undefined, nowMs: number) => planSync({
      collaSet: collaSet({ replicas: 1 }),
      nowMs,
      updatedRevision: "web-r2",
      currentRevision: "web-r1",
      pods: [drained()],
      sources: revisions,
      lifecycle: { ...lifecycle(nowMs), operationDelayFor: (pod) => (pod.metadata?.name === "a" ? delayMs : undefined) },
      decorationTargets: (slots) => new Map(slots.map((slot) => [slot.name, new Map()])),
    });
    expect(summary(planWith(2000, 1500).actions)).toEqual(["permit-operation a"]);
    expect(summary(planWith(undefined, 1500).actions)).toEqual([]);
  });

  it("with operationDelaySeconds 0, operates as soon as the pod is drained", () => {
    expect(summary(planAt(collaSet({ replicas: 1, updateStrategy: { operationDelaySeconds: 0 } }), [drained()], 1500).actions)).toEqual(["in-place a"]);
  });
});

describe("planSync: a decoration that cannot be rendered into the slot", () => {
  // Its mount names a volume the CollaSet's template does not provide.
  const needsVolume = sidecarRevision("certs", "c1", "envoy:1", {
    template: { containers: [{ name: "certs-sidecar", image: "envoy:1", volumeMounts: [{ name: "tls", mountPath: "/etc/tls" }] }] },
  });
  const withCerts = sources({ "web-r1": template("nginx:1.27") }, [needsVolume]);

  it("creates no pod the API server would refuse: the slot is reported blocked", () => {
    const result = planSync({
      nowMs: 0,
      collaSet: collaSet({ replicas: 1 }),
      updatedRevision: "web-r1",
      currentRevision: undefined,
      pods: [],
      sources: withCerts,
      decorationTargets: (slots) => new Map(slots.map((slot) => [slot.name, new Map([["certs", "c1"]])])),
    });
    expect(result.actions).toEqual([]);
    expect(result.blocked).toEqual([expect.stringMatching(/^instance 0: PodDecoration shop\/certs: rendering revision c1 into this pod would make a pod the API server refuses: .*volume "tls"/)]);
  });

  it("updates no live pod to it either", () => {
    const result = planSync({
      nowMs: 0,
      collaSet: collaSet({ replicas: 1 }),
      updatedRevision: "web-r1",
      currentRevision: "web-r1",
      pods: [pod("a", { id: 0, template: "web-r1" })],
      sources: withCerts,
      decorationTargets: (slots) => new Map(slots.map((slot) => [slot.name, new Map([["certs", "c1"]])])),
    });
    expect(result.actions).toEqual([]);
    expect(result.blocked).toEqual([expect.stringMatching(/^pod a: PodDecoration shop\/certs: .*volume "tls"/)]);
  });
});
