import { describe, expect, it } from "vitest";
import { decorationTargets, type Slot } from "../../src/controller/decoration-targets.ts";
import { recordedRevisions } from "../../src/decoration/recording.ts";
import type { PodDecoration } from "../../src/api/poddecoration.ts";
import type { Pod } from "../../src/kube/objects.ts";
import { pod, podDecoration } from "./collaset/fixtures.ts";

function slot(name: string, id: number, current: Record<string, string> = {}, ready = true): Slot {
  return { name, labels: { app: "web", "collaset.kusionstack.io/instance-id": String(id) }, ready, current: new Map(Object.entries(current)) };
}

function targets(decorations: PodDecoration[], slots: Slot[], updated: Record<string, string | undefined>, otherPods: Pod[] = []) {
  const result = decorationTargets({
    namespace: "shop",
    decorations,
    updatedRevision: (decoration) => updated[decoration.metadata.name ?? ""],
    otherPods: () => otherPods,
    recorded: recordedRevisions,
    slots,
  });
  return Object.fromEntries([...result].map(([name, chosen]) => [name, Object.fromEntries(chosen)]));
}

describe("decorationTargets", () => {
  const slots = [slot("web-a", 0), slot("web-b", 1), slot("web-c", 2)];

  it("gives every matched slot the updated revision without a rolling update", () => {
    expect(targets([podDecoration("logging")], slots, { logging: "l2" })).toEqual({ "web-a": { logging: "l2" }, "web-b": { logging: "l2" }, "web-c": { logging: "l2" } });
  });

  it("holds back the last `partition` pods; held-back slots keep what they have", () => {
    const decorated = [slot("web-a", 0), slot("web-b", 1, { logging: "l1" }), slot("web-c", 2)];
    const pd = podDecoration("logging", { updateStrategy: { rollingUpdate: { partition: 2 } } });
    expect(targets([pd], decorated, { logging: "l2" })).toEqual({ "web-a": { logging: "l2" }, "web-b": { logging: "l1" }, "web-c": {} });
  });

  it("plans over the decoration's other matched pods too: an already updated bare pod uses up the partition's moving share", () => {
    const pd = podDecoration("logging", { updateStrategy: { rollingUpdate: { partition: 3 } } });
    const bare = pod("bare", { decorations: { logging: "l2" } });
    bare.metadata!.ownerReferences = [];
    expect(targets([pd], slots, { logging: "l2" }, [bare])).toEqual({ "web-a": {}, "web-b": {}, "web-c": {} });
    expect(targets([{ ...pd, spec: { ...pd.spec, updateStrategy: { rollingUpdate: { partition: 2 } } } }], slots, { logging: "l2" }, [bare])).toEqual({ "web-a": { logging: "l2" }, "web-b": {}, "web-c": {} });
  });

  it("places new pods by the new-pod policy, and gives held-back ones the current revision", () => {
    // Two live pods on l1, two to create; partition 2: two of the four move.
    const planned = [slot("web-a", 0, { logging: "l1" }), slot("web-b", 1, { logging: "l1" }), { ...slot("new pod 2", 2, {}, false), isNew: true }, { ...slot("new pod 3", 3, {}, false), isNew: true }];
    const pd = (newPodRevision?: "Updated" | "Current") => ({
      ...podDecoration("logging", { updateStrategy: { rollingUpdate: { partition: 2 }, ...(newPodRevision === undefined ? {} : { newPodRevision }) } }),
      status: { currentRevision: "l1" },
    });
    expect(targets([pd()], planned, { logging: "l2" })).toEqual({ "web-a": { logging: "l1" }, "web-b": { logging: "l1" }, "new pod 2": { logging: "l2" }, "new pod 3": { logging: "l2" } });
    expect(targets([pd("Current")], planned, { logging: "l2" })).toEqual({ "web-a": { logging: "l2" }, "web-b": { logging: "l2" }, "new pod 2": { logging: "l1" }, "new pod 3": { logging: "l1" } });
  });

  it("keeps what pods have when a decoration's updated revision cannot be resolved", () => {
    const current = [slot("web-a", 0, { logging: "l1" }), slot("web-b", 1)];
    expect(targets([podDecoration("logging")], current, { logging: undefined })).toEqual({ "web-a": { logging: "l1" }, "web-b": {} });
  });

  it("drops decorations being deleted and ones whose selector no longer matches", () => {
    const current = [slot("web-a", 0, { logging: "l1", mesh: "m1" })];
    const deleting = podDecoration("logging", {}, { deletionTimestamp: "2026-11-02T00:00:00Z" });
    const moved = podDecoration("mesh", { selector: { matchLabels: { app: "db" } } });
    expect(targets([deleting, moved], current, { logging: "l2", mesh: "m1" })).toEqual({ "web-a": {} });
  });

  it("applies exclusivity among decorations with a target: the higher weight wins, ties all apply", () => {
    const low = podDecoration("mesh-v1", { injectStrategy: { group: "mesh", weight: 1 } });
    const high = podDecoration("mesh-v2", { injectStrategy: { group: "mesh", weight: 2 }, updateStrategy: { rollingUpdate: { partition: 1 } } });
    const tie = podDecoration("mesh-v3", { injectStrategy: { group: "mesh", weight: 2 }, updateStrategy: { rollingUpdate: { partition: 1 } } });
    const current = [slot("web-a", 0, { "mesh-v1": "a1" }), slot("web-b", 1, { "mesh-v1": "a1" })];
    // web-b is held back by both weight-2 decorations: it keeps mesh-v1.
    expect(targets([low, high, tie], current, { "mesh-v1": "a1", "mesh-v2": "b1", "mesh-v3": "c1" })).toEqual({
      "web-a": { "mesh-v2": "b1", "mesh-v3": "c1" },
      "web-b": { "mesh-v1": "a1" },
    });
  });
});

describe("decorationTargets: a new pod's labels select further decorations, as the engine selects them", () => {
  const marker = podDecoration("mesh-marker", { template: { metadata: [{ patchPolicy: "Overwrite", labels: { mesh: "on" } }] } });
  const mesh = podDecoration("mesh", { selector: { matchLabels: { mesh: "on" } } });
  const newSlot: Slot = { ...slot("new pod 0", 0, {}, false), isNew: true };

  it("gives a pod to create the decoration its other decorations' labels select", () => {
    expect(targets([marker, mesh], [newSlot], { "mesh-marker": "m1", mesh: "p1" })).toEqual({ "new pod 0": { "mesh-marker": "m1", mesh: "p1" } });
  });

  it("follows the chain no deeper than the rounds it is given", () => {
    const result = decorationTargets({
      namespace: "shop",
      decorations: [marker, mesh],
      updatedRevision: (decoration) => ({ "mesh-marker": "m1", mesh: "p1" })[decoration.metadata.name ?? ""],
      otherPods: () => [],
      recorded: recordedRevisions,
      slots: [newSlot],
      maxSelectionRounds: 1,
    });
    expect(Object.fromEntries(result.get("new pod 0")!)).toEqual({ "mesh-marker": "m1" });
  });
});
