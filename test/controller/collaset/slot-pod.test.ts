import { describe, expect, it } from "vitest";
import { sameRevisions, slotPod } from "../../../src/controller/collaset/slot-pod.ts";
import { collaSet, sidecarRevision, sources, template } from "./fixtures.ts";

describe("slotPod", () => {
  const revisions = sources({ "web-r1": template() }, [sidecarRevision("logging", "logging-a", "fluent-bit:1")]);

  it("makes the template revision into an owned pod with its instance id, and records that no decoration was chosen", () => {
    const pod = slotPod(collaSet(), 4, { template: "web-r1", decorations: new Map() }, revisions)!;
    expect(pod.metadata).toEqual({
      generateName: "web-",
      namespace: "shop",
      labels: { app: "web", "collaset.kusionstack.io/instance-id": "4", "controller-revision-hash": "web-r1" },
      annotations: { "poddecoration.kusionstack.io/revisions": "[]" },
      ownerReferences: [{ apiVersion: "apps.kusionstack.io/v1alpha1", kind: "CollaSet", name: "web", uid: "cls-uid", controller: true, blockOwnerDeletion: true }],
    });
    expect(pod.spec!.containers.map((container) => container.name)).toEqual(["app"]);
  });

  it("renders the chosen decoration revisions and records them", () => {
    const pod = slotPod(collaSet(), 0, { template: "web-r1", decorations: new Map([["logging", "logging-a"]]) }, revisions)!;
    expect(pod.spec!.containers.map((container) => `${container.name}=${container.image ?? ""}`)).toEqual(["logging-sidecar=fluent-bit:1", "app=nginx:1.27"]);
    expect(pod.metadata!.annotations!["poddecoration.kusionstack.io/revisions"]).toBe('[{"name":"logging","revision":"logging-a"}]');
    expect(pod.metadata!.labels!["poddecoration.kusionstack.io/pd-logging"]).toBe("logging-a");
  });

  it("makes nothing when a revision it needs is not known", () => {
    expect(slotPod(collaSet(), 0, { template: "web-r9", decorations: new Map() }, revisions)).toBeUndefined();
    expect(slotPod(collaSet(), 0, { template: "web-r1", decorations: new Map([["logging", "logging-z"]]) }, revisions)).toBeUndefined();
  });

  it("compares what pods are made of, not how the maps were built", () => {
    const a = { template: "t", decorations: new Map([["x", "1"], ["y", "2"]]) };
    expect(sameRevisions(a, { template: "t", decorations: new Map([["y", "2"], ["x", "1"]]) })).toBe(true);
    expect(sameRevisions(a, { template: "t", decorations: new Map([["x", "1"]]) })).toBe(false);
    expect(sameRevisions(a, { template: "u", decorations: a.decorations })).toBe(false);
  });
});
