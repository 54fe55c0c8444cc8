// Admission under the cost bounds of DESIGN §10 ("No namespace can stall another"): the pod
// webhook renders a namespace's decorations within its limit and its rounds, within the
// request's time, and says what it did not apply; PodDecoration admission refuses the decoration
// over the namespace's limit and the one that makes a chain deeper than the rounds, naming them.
import jsonpatch from "fast-json-patch";
import { describe, expect, it } from "vitest";
import type { PodDecoration } from "../../src/api/poddecoration.ts";
import type { DecorationSource } from "../../src/decoration/updated-revisions.ts";
import type { DecorationBounds } from "../../src/decoration/engine-bounds.ts";
import type { AdmissionRequest } from "../../src/webhook/admission-review.ts";
import { withPrivilegeChecks } from "../../src/webhook/decoration-privilege.ts";
import { podMutation } from "../../src/webhook/pod-mutation.ts";
import { trustUsernames } from "../../src/webhook/requester-trust.ts";
import { validatePodDecorations } from "../../src/webhook/resource-admission.ts";

const NAMESPACE = "team-a";
const BOUNDS: DecorationBounds = { maxDecorationsPerNamespace: 3, maxSelectionRounds: 2 };

function decoration(name: string, spec: Partial<PodDecoration["spec"]> = {}, created = "2026-01-01T00:00:00Z"): PodDecoration {
  return {
    apiVersion: "apps.kusionstack.io/v1alpha1",
    kind: "PodDecoration",
    metadata: { name, namespace: NAMESPACE, creationTimestamp: created },
    spec: { selector: { matchLabels: { app: "web" } }, template: { containers: [{ name, image: `${name}:1` }] }, ...spec },
  };
}

function source(decorations: PodDecoration[]): DecorationSource {
  return { decorations: (namespace) => decorations.filter((pd) => pd.metadata.namespace === namespace), revisionData: () => undefined, bounds: BOUNDS };
}

function podRequest(labels: Record<string, string> = { app: "web" }): AdmissionRequest {
  return { uid: "u1", kind: { group: "", version: "v1", kind: "Pod" }, operation: "CREATE", namespace: NAMESPACE, object: { apiVersion: "v1", kind: "Pod", metadata: { name: "web-0", labels }, spec: { containers: [{ name: "app", image: "web:1" }] } } };
}

const mutate = (decorations: PodDecoration[], onDecorationError: "reject" | "admit" = "reject") =>
  podMutation({ source: source(decorations), onDecorationError, trustRequester: trustUsernames([]) });

function containerNames(decision: ReturnType<ReturnType<typeof podMutation>>): string[] {
  const patch = JSON.parse(Buffer.from(decision.response.patch ?? "", "base64").toString() || "[]") as jsonpatch.Operation[];
  const pod = jsonpatch.applyPatch(structuredClone(podRequest().object), patch, true, false).newDocument as { spec: { containers: { name: string }[] } };
  return pod.spec.containers.map((container) => container.name);
}

describe("the pod webhook within the namespace's limit", () => {
  it("applies the oldest decorations up to the limit and warns about the newer ones that select the pod", () => {
    const decorations = [
      decoration("d-newest", {}, "2026-01-05T00:00:00Z"),
      decoration("a", {}, "2026-01-01T00:00:00Z"),
      decoration("b", {}, "2026-01-02T00:00:00Z"),
      decoration("c", {}, "2026-01-03T00:00:00Z"),
      decoration("e-other-pods", { selector: { matchLabels: { app: "db" } } }, "2026-01-06T00:00:00Z"),
    ];
    const decision = mutate(decorations)(podRequest());
    expect(decision.response.allowed).toBe(true);
    expect(containerNames(decision)).toEqual(["a", "b", "c", "app"]);
    expect(decision.response.warnings).toEqual([
      "pod-decorator: PodDecoration d-newest not applied: namespace team-a has 5 PodDecorations, more than the limit of 3: the newest 2 are not applied to new pods, and pods keep what they record of them",
    ]);
  });

  it("refuses a pod its decorations select one another too deep for, under onDecorationError reject", () => {
    const decorations = [
      decoration("marker", { template: { metadata: [{ patchPolicy: "Overwrite", labels: { mesh: "on" } }] } }),
      decoration("mesh", { selector: { matchLabels: { mesh: "on" } }, template: { metadata: [{ patchPolicy: "Overwrite", labels: { logs: "on" } }] } }),
      decoration("logs", { selector: { matchLabels: { logs: "on" } } }),
    ];
    const decision = mutate(decorations)(podRequest());
    expect(decision.response.allowed).toBe(false);
    expect(decision.response.status?.message).toMatch(/^pod-decorator: PodDecoration team-a\/logs: selects the pod only through labels other decorations set, in selection round 3/);
    const admitted = mutate(decorations, "admit")(podRequest());
    expect(admitted.response.allowed).toBe(true);
    expect(admitted.response.patch).toBeUndefined();
    expect(admitted.response.warnings?.[0]).toMatch(/the pod was admitted undecorated$/);
  });

  it("stops rendering when the request's time is spent, and goes through onDecorationError", () => {
    const spent = { spent: () => true, milliseconds: 9000 };
    const decision = mutate([decoration("a")])(podRequest(), spent);
    expect(decision.response.allowed).toBe(false);
    expect(decision.response.status?.message).toBe("pod-decorator: PodDecoration team-a/a: not rendered: the time for this pod's decorations (9000 ms, the request's) ran out after 0 of 1");
  });
});

describe("PodDecoration admission of what a namespace's decorations cost", () => {
  const handler = (cached: PodDecoration[]) => withPrivilegeChecks(validatePodDecorations, {
    reviewAccess: () => Promise.resolve({ allowed: true }),
    decorations: (namespace) => cached.filter((pd) => pd.metadata.namespace === namespace),
    namespaceLabels: () => Promise.resolve({}),
    bounds: BOUNDS,
  });
  const request = (object: PodDecoration, operation: "CREATE" | "UPDATE" = "CREATE"): AdmissionRequest => ({
    uid: "u",
    kind: { group: "apps.kusionstack.io", version: "v1alpha1", kind: "PodDecoration" },
    operation,
    namespace: NAMESPACE,
    name: object.metadata.name,
    userInfo: { username: "jane" },
    object: { ...object, metadata: { name: object.metadata.name, namespace: NAMESPACE } },
    ...(operation === "UPDATE" ? { oldObject: { ...object, spec: { ...object.spec, template: {} } } } : {}),
  });

  it("refuses the decoration over the namespace's limit, naming the limit", async () => {
    const decision = await handler([decoration("a"), decoration("b"), decoration("c")])(request(decoration("d")));
    expect(decision.result).toBe("rejected");
    expect(decision.response.status?.message).toBe(
      "PodDecoration/d: metadata.namespace: Forbidden: namespace team-a holds 3 PodDecorations, the most one namespace may hold (3, the webhook's --max-decorations-per-namespace): every one is selected against each pod created there",
    );
  });

  it("lets a decoration of the namespace change when it is full, and counts nothing being deleted", async () => {
    expect((await handler([decoration("a"), decoration("b"), decoration("c")])(request(decoration("c"), "UPDATE"))).response.allowed).toBe(true);
    const going = { ...decoration("c"), metadata: { ...decoration("c").metadata, deletionTimestamp: "2026-02-01T00:00:00Z" } };
    expect((await handler([decoration("a"), decoration("b"), going])(request(decoration("d")))).response.allowed).toBe(true);
  });

  it("refuses the decoration that makes a chain deeper than a pod's rounds, naming the chain", async () => {
    const marker = decoration("marker", { template: { metadata: [{ patchPolicy: "Overwrite", labels: { mesh: "on" } }] } });
    const mesh = decoration("mesh", { selector: { matchLabels: { mesh: "on" } }, template: { metadata: [{ patchPolicy: "Overwrite", labels: { logs: "on" } }] } });
    const logs = decoration("logs", { selector: { matchLabels: { logs: "on" } } });
    const decision = await handler([marker, mesh])(request(logs));
    expect(decision.result).toBe("rejected");
    expect(decision.response.status?.message).toBe(
      "PodDecoration/logs: spec: Forbidden: with the labels it sets or selects, the namespace's decorations select one another 3 deep (marker → mesh → logs); a pod is given 2 rounds of selection (the webhook's --max-selection-rounds), so a pod the first selects could not be decorated",
    );
    // Two deep is within the rounds.
    expect((await handler([marker])(request(mesh))).response.allowed).toBe(true);
  });
});
