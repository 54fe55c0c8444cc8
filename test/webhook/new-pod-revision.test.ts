// The pod webhook gives a pod being created the revision its decoration's rollout gives it
// (the new-pod policy, DESIGN §5): updated while the partition has room, else the current
// revision (stored) — or nothing, said in a warning, when the decoration has none yet.
import jsonpatch from "fast-json-patch";
import { describe, expect, it } from "vitest";
import type { PodDecoration } from "../../src/api/poddecoration.ts";
import type { AdmissionRequest } from "../../src/webhook/admission-review.ts";
import { podMutation } from "../../src/webhook/pod-mutation.ts";
import { trustNobody } from "../../src/webhook/requester-trust.ts";
import type { DecorationSource } from "../../src/decoration/updated-revisions.ts";
import { specRevision } from "../../src/revision/revision-data.ts";

function decoration(status: PodDecoration["status"]): PodDecoration {
  return {
    apiVersion: "apps.kusionstack.io/v1alpha1",
    kind: "PodDecoration",
    metadata: { name: "logging", namespace: "team-a", uid: "u", creationTimestamp: "2026-01-01T00:00:00Z" },
    spec: { selector: {}, updateStrategy: { rollingUpdate: { partition: 2 }, newPodRevision: "Current" }, template: { containers: [{ name: "shipper", image: "fluent-bit:2" }] } },
    status,
  };
}

const updated = specRevision(decoration({})).name;
const stored = { "team-a/logging-old": { template: { containers: [{ name: "shipper", image: "fluent-bit:1" }] }, injectStrategy: { group: "", weight: 0 } } };
const source = (pd: PodDecoration): DecorationSource => ({ decorations: () => [pd], revisionData: (namespace, name) => stored[`${namespace}/${name}` as keyof typeof stored] });
const pod = { apiVersion: "v1", kind: "Pod", metadata: { name: "web", labels: { app: "web" } }, spec: { containers: [{ name: "app", image: "web:1" }] } };
const request: AdmissionRequest = { uid: "u1", kind: { group: "", version: "v1", kind: "Pod" }, operation: "CREATE", namespace: "team-a", object: pod };

function sidecarImage(pd: PodDecoration): string | undefined {
  const { response } = podMutation({ source: source(pd), onDecorationError: "reject", trustRequester: trustNobody })(request);
  if (response.patch === undefined) return undefined;
  const operations = JSON.parse(Buffer.from(response.patch, "base64").toString()) as jsonpatch.Operation[];
  const result = jsonpatch.applyPatch(structuredClone(pod), operations, true, false).newDocument as { spec: { containers: { name: string; image: string }[] } };
  return result.spec.containers.find((container) => container.name === "shipper")?.image;
}

describe("a pod created during a partitioned rollout", () => {
  it("gets the updated revision while the partition has room for one more updated pod", () => {
    expect(sidecarImage(decoration({ updatedRevision: updated, currentRevision: "logging-old", matchedPods: 4, updatedPods: 2 }))).toBe("fluent-bit:2");
  });

  it("gets the current revision when updating it would overshoot the partition", () => {
    expect(sidecarImage(decoration({ updatedRevision: updated, currentRevision: "logging-old", matchedPods: 4, updatedPods: 3 }))).toBe("fluent-bit:1");
  });

  it("gets nothing, with a warning, when the decoration has no current revision yet", () => {
    const { response } = podMutation({ source: source(decoration({ updatedRevision: updated, matchedPods: 4, updatedPods: 3 })), onDecorationError: "reject", trustRequester: trustNobody })(request);
    expect(response.patch).toBeUndefined();
    expect(response.warnings).toEqual(["PodDecoration/logging: held back by its rollout, and it has no earlier revision to render; not applied"]);
  });
});
