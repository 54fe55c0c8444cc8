import jsonpatch from "fast-json-patch";
import { describe, expect, it } from "vitest";
import type { PodDecoration } from "../../src/api/poddecoration.ts";
import type { AdmissionRequest } from "../../src/webhook/admission-review.ts";
import { podMutation } from "../../src/webhook/pod-mutation.ts";
import { trustUsernames } from "../../src/webhook/requester-trust.ts";
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

const CONTROLLER = "system:serviceaccount:pod-decorator-system:pod-decorator";
const trustRequester = trustUsernames([CONTROLLER]);

function mutation(decorations: PodDecoration[], revisions: Record<string, unknown> = {}) {
  return podMutation({ source: source(decorations, revisions), onDecorationError: "reject", trustRequester });
}

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
    const decision = mutation([pd])(request());
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
    const decision = mutation([pd], { [`team-a/${name}`]: stored })(request());
    const result = patched(decision) as { spec: { containers: { image: string }[] } };
    expect(result.spec.containers[0]!.image).toBe("fluent-bit:stored");
  });

  it("uses the collision count when naming the updated revision", () => {
    const pd = { ...decoration("logging"), status: { collisionCount: 2 } };
    const result = patched(mutation([pd])(request())) as { metadata: { labels: Record<string, string> } };
    expect(result.metadata.labels["poddecoration.kusionstack.io/pd-logging"]).toBe(specRevision(pd, 2).name);
    expect(specRevision(pd, 2).name).not.toBe(specRevision(pd).name);
  });

  it("decorates dry-run requests the same way", () => {
    const handler = mutation([decoration("logging")]);
    expect(handler(request({ dryRun: true })).response.patch).toBe(handler(request()).response.patch);
  });

  it("leaves a pod the controller created alone when its revisions annotation is present, even an empty list", () => {
    const held = { ...pod, metadata: { ...pod.metadata, annotations: { "poddecoration.kusionstack.io/revisions": "[]" } } };
    const decision = mutation([decoration("logging")])(request({ object: held, userInfo: { username: CONTROLLER } }));
    expect(decision).toEqual({ response: { uid: "u1", allowed: true }, result: "skipped" });
  });

  it("ignores the revisions annotation and decoration labels from anyone else, renders, and says so", () => {
    const pd = decoration("logging");
    const forged = {
      ...pod,
      metadata: {
        ...pod.metadata,
        labels: { ...pod.metadata.labels, "poddecoration.kusionstack.io/pd-logging": "logging-old", "poddecoration.kusionstack.io/pd-gone": "gone-1" },
        annotations: { "poddecoration.kusionstack.io/revisions": '[{"name":"logging","revision":"logging-old"},{"name":"gone","revision":"gone-1"}]', note: "kept" },
      },
    };
    const decision = mutation([pd])(request({ object: structuredClone(forged), userInfo: { username: "jane", groups: ["system:authenticated"] } }));
    expect(decision.result).toBe("injected");
    const result = patched(decision, forged) as { metadata: { annotations: Record<string, string>; labels: Record<string, string> }; spec: { containers: { name: string }[] } };
    const revision = specRevision(pd).name;
    expect(result.spec.containers.map((container) => container.name)).toEqual(["logging-sidecar", "app"]);
    expect(result.metadata.annotations).toEqual({ "poddecoration.kusionstack.io/revisions": JSON.stringify([{ name: "logging", revision }]), "poddecoration.kusionstack.io/injected-containers": "logging-sidecar", note: "kept" });
    expect(result.metadata.labels).toEqual({ app: "web", "poddecoration.kusionstack.io/pd-logging": revision });
    expect(decision.response.warnings?.[0]).toMatch(/^pod-decorator: the pod's poddecoration\.kusionstack\.io\/revisions annotation and pd-\* labels were set by jane, not by pod-decorator's controller/);
  });

  it("removes forged bookkeeping even where no decoration applies", () => {
    const forged = { ...pod, metadata: { ...pod.metadata, labels: { app: "other", "poddecoration.kusionstack.io/pd-x": "x-1" }, annotations: { "poddecoration.kusionstack.io/revisions": "[]", "poddecoration.kusionstack.io/injected-containers": "app" } } };
    for (const decorations of [[], [decoration("logging")]]) {
      const decision = mutation(decorations)(request({ object: structuredClone(forged) }));
      const result = patched(decision, forged) as { metadata: { annotations: Record<string, string>; labels: Record<string, string> } };
      expect(result.metadata).toEqual({ generateName: "web-", labels: { app: "other" }, annotations: {} });
      expect(decision.response.warnings).toHaveLength(1);
    }
  });

  it("says nothing when a copy of a decorated pod records exactly what is rendered again", () => {
    const handler = mutation([decoration("logging")]);
    const once = patched(handler(request()));
    const again = handler(request({ object: structuredClone(once) }));
    expect(again).toEqual({ response: { uid: "u1", allowed: true }, result: "skipped" });
  });

  it("costs a namespace without decorations one cache lookup: the pod itself is not read", () => {
    let lookups = 0;
    const empty: DecorationSource = { decorations: () => (lookups++, []), revisionData: () => undefined };
    const untouchable = new Proxy({ metadata: { labels: { app: "web" } } }, {
      get(target, key) {
        if (key === "metadata") return target.metadata;
        throw new Error(`read pod.${String(key)}`);
      },
    });
    const decision = podMutation({ source: empty, onDecorationError: "reject", trustRequester })(request({ object: untouchable }));
    expect(decision).toEqual({ response: { uid: "u1", allowed: true }, result: "skipped" });
    expect(lookups).toBe(1);
  });

  it("allows other kinds and operations unchanged", () => {
    const handler = mutation([decoration("logging")]);
    expect(handler(request({ operation: "UPDATE", oldObject: pod })).response).toEqual({ uid: "u1", allowed: true });
    expect(handler(request({ kind: { group: "", version: "v1", kind: "ConfigMap" } })).response).toEqual({ uid: "u1", allowed: true });
    expect(handler(request({ subResource: "ephemeralcontainers" })).response).toEqual({ uid: "u1", allowed: true });
  });

  it("only decorates with decorations of the pod's namespace", () => {
    const other = { ...decoration("logging"), metadata: { ...decoration("logging").metadata, namespace: "team-b" } };
    const decision = mutation([other])(request());
    expect(decision.result).toBe("skipped");
    expect(decision.response.patch).toBeUndefined();
  });

  it("refuses the pod with a message naming a decoration that cannot be rendered", () => {
    const broken = decoration("broken", "x", { updateStrategy: { rollingUpdate: { partition: -1 } } });
    const decision = mutation([broken])(request());
    expect(decision.result).toBe("error");
    expect(decision.response.allowed).toBe(false);
    expect(decision.response.status?.message).toMatch(/PodDecoration team-a\/broken: invalid spec: PodDecoration\/broken: spec\.updateStrategy\.rollingUpdate\.partition/);
  });

  it("admits the pod undecorated with a warning when told to", () => {
    const broken = decoration("broken", "x", { updateStrategy: { rollingUpdate: { partition: -1 } } });
    const decision = podMutation({ source: source([broken, decoration("logging")]), onDecorationError: "admit", trustRequester })(request());
    expect(decision.response.allowed).toBe(true);
    expect(decision.response.patch).toBeUndefined();
    expect(decision.response.warnings?.[0]).toMatch(/PodDecoration team-a\/broken: .*admitted undecorated/);
  });

  it("returns a patch that applies to the pod as sent, even one without metadata or with null for it", () => {
    for (const bare of [{ spec: { containers: [{ name: "app", image: "web:1" }] } }, { metadata: null, spec: { containers: [{ name: "app", image: "web:1" }], initContainers: null } }]) {
      const everything = { ...decoration("logging"), spec: { selector: {}, template: { containers: [{ name: "logging-sidecar", image: "fluent-bit:3.0" }] } } };
      const decision = mutation([everything])(request({ object: structuredClone(bare) }));
      expect(decision.result).toBe("injected");
      const result = patched(decision, bare) as { metadata: Record<string, unknown>; spec: { containers: { name: string }[] } };
      expect(result.spec.containers.map((container) => container.name)).toEqual(["logging-sidecar", "app"]);
      expect(result.metadata).not.toHaveProperty("namespace");
    }
  });

  it("patches a pod as the API server sends it (null fields included) into the decorated pod, and leaves every null alone", () => {
    const sent = {
      ...structuredClone(pod),
      metadata: { generateName: "web-", creationTimestamp: null, labels: { app: "web" }, annotations: null },
      spec: { containers: [{ name: "app", image: "web:1", resources: {}, env: null }], volumes: null, tolerations: null },
      status: {},
    };
    const withEnv = { ...decoration("logging"), spec: { ...decoration("logging").spec, template: { containers: [{ name: "logging-sidecar", image: "fluent-bit:3.0" }], primaryContainers: [{ env: [{ name: "LOG", value: "json" }] }] } } };
    const decision = mutation([withEnv])(request({ object: structuredClone(sent) }));
    expect(decision.response.warnings).toBeUndefined();
    expect(decision.result).toBe("injected");
    const patch = JSON.parse(Buffer.from(decision.response.patch ?? "", "base64").toString()) as { path: string }[];
    expect(patch.map((operation) => operation.path).filter((path) => /creationTimestamp|volumes|tolerations|status/.test(path))).toEqual([]);
    const result = patched(decision, sent) as { metadata: Record<string, unknown>; spec: { containers: { name: string; env?: unknown }[] } };
    expect(result.metadata.creationTimestamp).toBeNull();
    expect(result.spec.containers.map((container) => [container.name, container.env])).toEqual([["logging-sidecar", undefined], ["app", [{ name: "LOG", value: "json" }]]]);
  });

  it("handles a pod a selecting decoration cannot be rendered into as that decoration's failure, naming the field, whatever its shape", () => {
    let deep: unknown = "x";
    for (let level = 0; level < 5000; level++) deep = { a: deep };
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ metadata: "web-0", spec: { containers: [{ name: "app", image: "web:1" }] } }, /: metadata: not an object$/],
      [{ ...structuredClone(pod), spec: { containers: [{ name: "app", image: "web:1", extra: deep }] } }, /: spec\.containers\[0\]\.extra\.a\.a.*\.\.\.: Invalid value: nests deeper than 100 levels$/],
      [{ metadata: { name: "x" }, spec: { containers: "app" } }, /: spec\.containers: a pod needs at least one container$/],
      [{ metadata: { name: "x" }, spec: { containers: null } }, /: spec\.containers: a pod needs at least one container$/],
      [{ metadata: { name: "x", labels: { app: 1 } }, spec: { containers: [{ name: "app" }] } }, /: metadata\.labels: not a map of strings$/],
      [{ metadata: { name: "x" }, spec: { containers: [{ name: "app", env: {} }] } }, /: spec\.containers\[0\]: env is not a list of variables with names$/],
      [{ metadata: { name: "x" }, spec: { containers: [{ name: "app" }], tolerations: [{ key: 5 }] } }, /: spec\.tolerations: not a list of tolerations$/],
    ];
    const everything = { ...decoration("logging"), spec: { selector: {}, template: { containers: [{ name: "logging-sidecar", image: "fluent-bit:3.0" }] } } };
    const admitting = podMutation({ source: source([everything]), onDecorationError: "admit", trustRequester });
    for (const [object, reason] of cases) {
      const refused = mutation([everything])(request({ object }));
      expect(refused.result).toBe("error");
      expect(refused.response.allowed).toBe(false);
      expect(refused.response.status?.message).toMatch(/^pod-decorator: PodDecoration team-a\/logging: selects the pod but cannot be rendered into it/);
      expect(refused.response.status?.message).toMatch(reason);
      const admitted = admitting(request({ object }));
      expect(admitted.result).toBe("error");
      expect(admitted.response.allowed).toBe(true);
      expect(admitted.response.patch).toBeUndefined();
      expect(admitted.response.warnings?.[0]).toMatch(/the pod was admitted undecorated$/);
      // No decoration selects it: nothing failed, the pod goes in as it is, with the reason —
      // unless its labels cannot be read, when any decoration might select it.
      const unselected = mutation([decoration("logging", "fluent-bit:3.0", { selector: { matchLabels: { app: "other" } } })])(request({ object }));
      const unreadableLabels = reason.source.includes("metadata\\.labels");
      expect(unselected.response.allowed).toBe(!unreadableLabels);
      if (!unreadableLabels) expect(unselected.response.warnings?.[0]).toMatch(/^pod-decorator: the pod was not decorated: /);
    }
  });

  it("renders only the decorations of the namespace the request names, never of one the object claims", () => {
    const victims = { ...decoration("secret-env"), metadata: { ...decoration("secret-env").metadata, namespace: "victim" } };
    const claiming = { ...structuredClone(pod), metadata: { ...structuredClone(pod.metadata), namespace: "victim" } };
    const handle = mutation([victims, decoration("logging")]);
    const named = patched(handle(request({ object: structuredClone(claiming), namespace: "team-a" })), claiming) as { spec: { containers: { name: string }[] } };
    expect(named.spec.containers.map((container) => container.name)).toEqual(["logging-sidecar", "app"]);
    const { namespace: _none, ...unnamed } = request({ object: structuredClone(claiming) });
    const decision = handle(unnamed);
    expect(decision.response.allowed).toBe(true);
    expect(decision.response.patch).toBeUndefined();
    expect(decision.response.warnings).toEqual(["pod-decorator: the request names no namespace; the pod was not decorated"]);
  });

  it("ignores metadata.managedFields: however deep or odd, they neither stop nor change the rendering", () => {
    let deep: unknown = {};
    for (let level = 0; level < 5000; level++) deep = { "f:a": deep };
    const withFields = { ...structuredClone(pod), metadata: { ...structuredClone(pod.metadata), managedFields: [{ manager: "kubectl", operation: "Update", fieldsType: "FieldsV1", fieldsV1: deep }] } };
    const decision = mutation([decoration("logging")])(request({ object: withFields }));
    expect(decision.result).toBe("injected");
    const plain = mutation([decoration("logging")])(request());
    expect(decision.response.patch).toBe(plain.response.patch);
  });

  it("removes forged bookkeeping from a pod it cannot render into, refused or admitted", () => {
    const forged = { metadata: { name: "x", labels: { app: "web", "poddecoration.kusionstack.io/pd-logging": "logging-1" }, annotations: { "poddecoration.kusionstack.io/revisions": '[{"name":"logging","revision":"logging-1"}]' } }, spec: { containers: [{ name: "app", env: {} }] } };
    for (const decorations of [[], [decoration("logging")]]) {
      const decision = podMutation({ source: source(decorations), onDecorationError: "admit", trustRequester })(request({ object: structuredClone(forged), userInfo: { username: "jane" } }));
      expect(decision.response.allowed).toBe(true);
      const result = patched(decision, forged) as { metadata: { annotations: Record<string, string>; labels: Record<string, string> } };
      expect(result.metadata.labels).toEqual({ app: "web" });
      expect(result.metadata.annotations).toEqual({});
    }
  });

  it("carries fields and values it does not know through untouched: the patch names only what it renders", () => {
    // Fields of a newer Kubernetes, values of enums newer than this code, fields nobody knows.
    const newer = {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "web-0", labels: { app: "web" }, futureMeta: { x: [1, 2] } },
      spec: {
        hostnameOverride: "custom",
        resources: { requests: { cpu: "1" } },
        schedulingGates: [{ name: "wait" }],
        tolerations: [{ key: "gpu", operator: "Lt", value: "5", effect: "NoSchedule" }, { key: "x", operator: "Exists", effect: "Sometime" }],
        containers: [{
          name: "app",
          image: "web:1",
          imagePullPolicy: "WhenNewer",
          restartPolicyRules: [{ action: "Restart", exitCodes: { operator: "In", values: [42] } }],
          resizePolicy: [{ resourceName: "cpu", restartPolicy: "NotRequired" }],
          futureField: { nested: [{ deep: true }] },
        }],
        futurePodField: "yes",
      },
    };
    const pd = { ...decoration("logging"), spec: { ...decoration("logging").spec, template: { containers: [{ name: "logging-sidecar", image: "fluent-bit:3.0", injectPolicy: "AfterPrimaryContainer" as const }], tolerations: [{ key: "dedicated", operator: "Exists" as const }] } } };
    const decision = mutation([pd])(request({ object: structuredClone(newer) }));
    expect(decision.response.allowed).toBe(true);
    const operations = JSON.parse(Buffer.from(decision.response.patch ?? "", "base64").toString()) as jsonpatch.Operation[];
    expect(operations.map((operation) => operation.path).sort()).toEqual([
      "/metadata/annotations",
      "/metadata/labels/poddecoration.kusionstack.io~1pd-logging",
      "/spec/containers/1",
      "/spec/tolerations/2",
    ]);
    const result = patched(decision, newer) as typeof newer;
    expect({ ...result, metadata: newer.metadata, spec: { ...result.spec, containers: result.spec.containers.slice(0, 1), tolerations: result.spec.tolerations.slice(0, 2) } }).toEqual(newer);
  });

  it("keeps what else a node selector term holds when it ANDs a decoration's terms into it", () => {
    const newer = {
      metadata: { name: "web-0", labels: { app: "web" } },
      spec: {
        containers: [{ name: "app", image: "web:1" }],
        affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: "zone", operator: "In", values: ["a"] }], matchTopology: { future: true } }] } } },
      },
    };
    const pd = { ...decoration("zoned"), spec: { ...decoration("zoned").spec, template: { affinity: { nodeSelectorTerms: [{ matchExpressions: [{ key: "pool", operator: "In" as const, values: ["prod"] }] }] } } } };
    const result = patched(mutation([pd])(request({ object: structuredClone(newer) })), newer) as typeof newer;
    expect(result.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms).toEqual([
      { matchExpressions: [{ key: "zone", operator: "In", values: ["a"] }, { key: "pool", operator: "In", values: ["prod"] }], matchTopology: { future: true } },
    ]);
  });

  it("admits the pod undecorated when something that is not the decoration's fault fails, and reports it", () => {
    const reported: unknown[] = [];
    const failing: DecorationSource = {
      decorations: (namespace) => [decoration("logging")].filter((pd) => pd.metadata.namespace === namespace),
      revisionData: () => {
        throw new TypeError("cache exploded");
      },
    };
    const decision = podMutation({ source: failing, onDecorationError: "reject", trustRequester, onInternalError: (error) => reported.push(error) })(request());
    expect(decision.result).toBe("error");
    expect(decision.response.allowed).toBe(true);
    expect(decision.response.patch).toBeUndefined();
    expect(decision.response.warnings).toEqual(["pod-decorator: internal error, the pod was admitted undecorated: TypeError: cache exploded"]);
    expect(reported).toHaveLength(1);
  });
});
