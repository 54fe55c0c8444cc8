// What rendering leaves behind for the garbage collector. The pod webhook renders thousands of
// pods a second: every one must be garbage that a young-generation collection (a scavenge) frees.
// Anything old that reaches a rendered pod (a WeakMap's table, a hidden class of one object's
// own, a cache) keeps it through scavenges until it is promoted; the old generation then fills
// with pods at the rate they come, paid for in full collections and their pauses.
import { getHeapSpaceStatistics, setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { describe, expect, it } from "vitest";
import type { Pod } from "../../src/api/pod.ts";
import { decoratePod, liveRevision } from "../../src/decoration/decorate.ts";
import type { AdmissionRequest } from "../../src/webhook/admission-review.ts";
import { podMutation } from "../../src/webhook/pod-mutation.ts";
import { trustNobody } from "../../src/webhook/requester-trust.ts";
import { asAdmissionSeesIt, typicalDecorations, typicalPod } from "../bench/typical-workload.ts";

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as (options?: { type: "minor" | "major" }) => void;

/** Bytes of objects in the old generation: where a scavenge promotes to (not code, not V8's own). */
function oldGenerationBytes(): number {
  return getHeapSpaceStatistics().filter((space) => space.space_name === "old_space" || space.space_name === "large_object_space").reduce((total, space) => total + space.space_used_size, 0);
}

/**
 * Old-generation bytes per pod that `decorate` leaves after two scavenges, over 200 distinct pods
 * (each as the API server sends it, with a label of its own) after 1,000 to warm up.
 */
function promotedPerPod(decorate: (pod: Pod) => number): { perPod: number; counted: number } {
  const template = JSON.stringify(asAdmissionSeesIt(typicalPod()));
  let serial = 0;
  const decorateOne = () => {
    const pod = JSON.parse(template) as Pod;
    pod.metadata!.labels!["pod-template-hash"] = `h${String(serial++)}`;
    return decorate(pod);
  };
  // Warm: the code compiled, the caches of the decorations filled.
  for (let index = 0; index < 1000; index++) decorateOne();
  gc();
  const before = oldGenerationBytes();
  const pods = 200;
  let counted = 0;
  for (let index = 0; index < pods; index++) counted += decorateOne();
  // Two scavenges: whatever still reaches a pod's objects is then in the old generation.
  gc({ type: "minor" });
  gc({ type: "minor" });
  return { perPod: (oldGenerationBytes() - before) / pods, counted };
}

const decorations = Object.freeze(typicalDecorations().map((decoration) => Object.freeze(decoration)));

describe("rendering's garbage", () => {
  // A pod's parsed and rendered objects are ~40 KiB; retaining them showed as 3.2-3.7 KiB per pod.
  it("the engine leaves nothing of the pods it decorated for the old generation", () => {
    const { perPod, counted } = promotedPerPod((pod) => decoratePod(pod, decorations, liveRevision).applied.length);
    expect(counted).toBe(5 * 200);
    expect(perPod).toBeLessThan(1024);
  });

  it("nor does the pod webhook, answering each pod with a patch", () => {
    const handler = podMutation({ source: { decorations: () => decorations, revisionData: () => undefined }, onDecorationError: "reject", trustRequester: trustNobody });
    let uid = 0;
    const { perPod, counted } = promotedPerPod((pod) => {
      const request = { uid: String(uid++), kind: { group: "", version: "v1", kind: "Pod" }, resource: { group: "", version: "v1", resource: "pods" }, operation: "CREATE", namespace: "default", userInfo: { username: "system:serviceaccount:kube-system:replicaset-controller" }, object: pod };
      return handler(request as AdmissionRequest).response.patch === undefined ? 0 : 1;
    });
    expect(counted).toBe(200);
    expect(perPod).toBeLessThan(1024);
  });
});
