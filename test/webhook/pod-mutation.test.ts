import jsonpatch from "fast-json-patch";
import { describe, expect, it } from "vitest";
import type { PodDecoration } from "../../src/api/poddecoration.ts";
import type { AdmissionRequest } from "../../src/webhook/admission-review.ts";
import { podMutation } from "../../src/webhook/pod-mutation.ts";
import type { DecorationSource } from "../../src/decoration/updated-revisions.ts";
import { specRevision } from "../../src/revision/revision-data.ts";

function decoration(name: string, image = "fluent-bit:3.0", extra: Partial<PodDecoration["spec"]> = {}): PodDecoration {
  return {
    apiVersion: "apps.kusionstack.io/v1alpha1",
    kind: "PodDecoration",
    metadata: { name, namespace: "team-a", uid: `uid-${name}`, creationTimestamp: "2026-01-01T00:00:00Z" },
    spec: {
      selector: { matchLabels: { app: "web" } },
      template: { containers: [{ name: `${name}-sidecar`, image }] },
      ...extra,
    },
  };
}

function source(decorations: PodDecoration[], revisions: Record<string, unknown> = {}): DecorationSource {
  return {
    decorations: (namespace) => decorations.filter((pd) => pd.metadata.namespace === namespace),
    revisionData: (namespace, name) => revisions[`${namespace}/${name}`],
  };
}

const pod = { apiVersion: "v1", kind: "Pod", metadata: { generateName: "web-", labels: { app: "web" } }, spec: { containers: [{ name: "app", image: "web:1" }] } };

function request(overrides: Partial<AdmissionRequest> = {}): AdmissionRequest {
  return { uid: "u1", kind: { group: "", version: "v1", kind: "Pod" }, operation: "CREATE", namespace: "team-a", object: structuredClone(pod), ...overrides };
}

function patched(decision: ReturnType<ReturnType<typeof podMutation>>, original: object = pod): Record<string, unknown> {
  const patch = JSON.parse(Buffer.from(decision.response.patch ?? "", "base64").toString() || "[]") as jsonpatch.Operation[];
  return jsonpatch.applyPatch(structuredClone(original), patch, true, false).newDocument as Record<string, unknown>;
}

describe("the pod webhook", () => {
  it("renders a matching decoration's live spec under the name the controller will give it", () => {
    const pd = decoration("logging");
    const decision = podMutation({ source: source([pd]), onDecorationError: "reject" })(request());
    expect(decision.result).toBe("injected");
    expect(decision.response.patchType).toBe("JSONPatch");
    const result = patched(decision) as { metadata: { annotations: Record<string, string>; labels: Record<string, string> }; spec: { containers: { name: string }[] } };
    const revision = specRevision(pd).name;
    expect(result.spec.containers.map((container) => container.name)).toEqual(["logging-sidecar", "app"]);
    expect(JSON.parse(result.metadata.annotations["poddecoration.kusionstack.io/revisions"]!)).toEqual([{ name: "logging", revision }]);
    expect(result.metadata.labels["poddecoration.kusionstack.io/pd-logging"]).toBe(revision);
    expect(result.metadata).not.toHaveProperty("namespace");
  });

  it("renders the stored ControllerRevision when the controller has stored it", () => {
    const pd = decoration("logging", "fluent-bit:3.0");
    const name = specRevision(pd).name;
    const stored = { template: { containers: [{ name: "logging-sidecar", image: "fluent-bit:stored" }] }, injectStrategy: { group: "", weight: 0 } };
    const decision = podMutation({ source: source([pd], { [`team-a/${name}`]: stored }), onDecorationError: "reject" })(request());
    const result = patched(decision) as { spec: { containers: { image: string }[] } };
    expect(result.spec.containers[0]!.image).toBe("fluent-bit:stored");
  });

  it("uses the collision count when naming the updated revision", () => {
    const pd = { ...decoration("logging"), status: { collisionCount: 2 } };
    const result = patched(podMutation({ source: source([pd]), onDecorationError: "reject" })(request())) as { metadata: { labels: Record<string, string> } };
    expect(result.metadata.labels["poddecoration.kusionstack.io/pd-logging"]).toBe(specRevision(pd, 2).name);
    expect(specRevision(pd, 2).name).not.toBe(specRevision(pd).name);
  });

  it("decorates dry-run requests the same way", () => {
    const handler = podMutation({ source: source([decoration("logging")]), onDecorationError: "reject" });
    expect(handler(request({ dryRun: true })).response.patch).toBe(handler(request()).response.patch);
  });

  it("leaves a pod alone when its revisions annotation is present, even an empty list", () => {
    const held = { ...pod, metadata: { ...pod.metadata, annotations: { "poddecoration.kusionstack.io/revisions": "[]" } } };
    const decision = podMutation({ source: source([decoration("logging")]), onDecorationError: "reject" })(request({ object: held }));
    expect(decision).toEqual({ response: { uid: "u1", allowed: true }, result: "skipped" });
  });

  it("allows other kinds and operations unchanged", () => {
    const handler = podMutation({ source: source([decoration("logging")]), onDecorationError: "reject" });
    expect(handler(request({ operation: "UPDATE", oldObject: pod })).response).toEqual({ uid: "u1", allowed: true });
    expect(handler(request({ kind: { group: "", version: "v1", kind: "ConfigMap" } })).response).toEqual({ uid: "u1", allowed: true });
    expect(handler(request({ subResource: "ephemeralcontainers" })).response).toEqual({ uid: "u1", allowed: true });
  });

  it("only decorates with decorations of the pod's namespace", () => {
    const other = { ...decoration("logging"), metadata: { ...decoration("logging").metadata, namespace: "team-b" } };
    const decision = podMutation({ source: source([other]), onDecorationError: "reject" })(request());
    expect(decision.result).toBe("skipped");
    expect(decision.response.patch).toBeUndefined();
  });

  it("refuses the pod with a message naming a decoration that cannot be rendered", () => {
    const broken = decoration("broken", "x", { updateStrategy: { rollingUpdate: { partition: -1 } } });
    const decision = podMutation({ source: source([broken]), onDecorationError: "reject" })(request());
    expect(decision.result).toBe("error");
    expect(decision.response.allowed).toBe(false);
    expect(decision.response.status?.message).toMatch(/PodDecoration team-a\/broken: invalid spec: PodDecoration\/broken: spec\.updateStrategy\.rollingUpdate\.partition/);
  });

  it("admits the pod undecorated with a warning when told to", () => {
    const broken = decoration("broken", "x", { updateStrategy: { rollingUpdate: { partition: -1 } } });
    const decision = podMutation({ source: source([broken, decoration("logging")]), onDecorationError: "admit" })(request());
    expect(decision.response.allowed).toBe(true);
    expect(decision.response.patch).toBeUndefined();
    expect(decision.response.warnings?.[0]).toMatch(/PodDecoration team-a\/broken: .*admitted undecorated/);
  });

  it("returns a patch that applies to the pod as sent, even one without metadata", () => {
    const bare = { spec: { containers: [{ name: "app", image: "web:1" }] } };
    const everything = { ...decoration("logging"), spec: { selector: {}, template: { containers: [{ name: "logging-sidecar", image: "fluent-bit:3.0" }] } } };
    const decision = podMutation({ source: source([everything]), onDecorationError: "reject" })(request({ object: structuredClone(bare) }));
    expect(decision.result).toBe("injected");
    const result = patched(decision, bare) as { metadata: Record<string, unknown>; spec: { containers: { name: string }[] } };
    expect(result.spec.containers.map((container) => container.name)).toEqual(["logging-sidecar", "app"]);
    expect(result.metadata).not.toHaveProperty("namespace");
  });

  it("refuses a pod whose metadata is null with the offending field, not an internal error", () => {
    const decision = podMutation({ source: source([decoration("logging")]), onDecorationError: "reject" })(request({ object: { metadata: null, spec: { containers: [{ name: "app", image: "web:1" }] } } }));
    expect(decision.result).toBe("rejected");
    expect(decision.response.status?.code).toBe(400);
    expect(decision.response.status?.message).toMatch(/^Pod\/<unnamed>: metadata: Invalid value: must be of type object/);
  });

  it("refuses a pod nested deeper than any pod is, naming where", () => {
    let deep: unknown = "x";
    for (let level = 0; level < 5000; level++) deep = { a: deep };
    const decision = podMutation({ source: source([decoration("logging")]), onDecorationError: "reject" })(request({ object: { ...structuredClone(pod), spec: { containers: [{ name: "app", image: "web:1", extra: deep }] } } }));
    expect(decision.result).toBe("rejected");
    expect(decision.response.status?.message).toMatch(/^Pod\/<unnamed>: spec\.containers\[0\]\.extra\.a\.a.*\.\.\.: Invalid value: nests deeper than 100 levels$/);
  });

  it("refuses a pod object that is not a pod with the offending field", () => {
    const decision = podMutation({ source: source([decoration("logging")]), onDecorationError: "reject" })(request({ object: { metadata: { name: "x" }, spec: { containers: "app" } } }));
    expect(decision.response.allowed).toBe(false);
    expect(decision.response.status?.message).toMatch(/^Pod\/x: spec\.containers/);
  });
});
