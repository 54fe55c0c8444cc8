// Writing a PodDecoration: only who may create pods in its namespace, and only a template that
// keeps the pods admissible under the namespace's Pod Security Standards.
import { describe, expect, it } from "vitest";
import type { ResourceAction, Subject } from "../../src/kube/access-review.ts";
import type { AdmissionRequest } from "../../src/webhook/admission-review.ts";
import { withPrivilegeChecks, type PrivilegeChecks } from "../../src/webhook/decoration-privilege.ts";
import { validatePodDecorations } from "../../src/webhook/resource-admission.ts";

const privileged = { name: "debugger", image: "debug:1", securityContext: { privileged: true } };

function decoration(containers: object[] = [{ name: "proxy", image: "proxy:1" }]) {
  return { apiVersion: "apps.kusionstack.io/v1alpha1", kind: "PodDecoration", metadata: { name: "sidecar", namespace: "shop" }, spec: { selector: {}, template: { containers } } };
}

function request(overrides: Partial<AdmissionRequest> = {}): AdmissionRequest {
  return {
    uid: "u",
    kind: { group: "apps.kusionstack.io", version: "v1alpha1", kind: "PodDecoration" },
    operation: "CREATE",
    namespace: "shop",
    name: "sidecar",
    userInfo: { username: "jane", uid: "j-1", groups: ["developers", "system:authenticated"], extra: { scopes: ["a"] } },
    object: decoration(),
    ...overrides,
  };
}

function world(options: { mayCreatePods?: boolean; labels?: Record<string, string>; failing?: boolean } = {}) {
  const asked: [Subject, ResourceAction][] = [];
  const checks: PrivilegeChecks = {
    reviewAccess: (subject, action) => {
      if (options.failing === true) return Promise.reject(new Error("connection refused"));
      asked.push([subject, action]);
      return Promise.resolve(options.mayCreatePods === false ? { allowed: false, reason: "RBAC: no rule" } : { allowed: true });
    },
    decorations: () => [],
    namespaceLabels: () => Promise.resolve(options.labels ?? {}),
  };
  return { handler: withPrivilegeChecks(validatePodDecorations, checks), asked };
}

describe("PodDecoration admission with privilege checks", () => {
  it("asks whether the requester may create pods in the namespace, as the requester", async () => {
    const { handler, asked } = world();
    expect((await handler(request())).response).toEqual({ uid: "u", allowed: true });
    expect(asked).toEqual([[{ username: "jane", uid: "j-1", groups: ["developers", "system:authenticated"], extra: { scopes: ["a"] } }, { namespace: "shop", verb: "create", group: "", resource: "pods" }]]);
  });

  it("refuses a requester who may not create pods there, saying why it matters", async () => {
    const decision = await world({ mayCreatePods: false }).handler(request());
    expect(decision.response.status).toEqual({
      code: 403,
      reason: "Forbidden",
      message: "PodDecoration/sidecar: Forbidden: jane may not create pods in namespace shop (RBAC: no rule); a PodDecoration runs what it injects in every pod it selects, so only who may create pods in namespace shop may write one",
    });
  });

  it("refuses a template that would make the namespace's pods inadmissible, with the rule it breaks", async () => {
    const decision = await world({ labels: { "pod-security.kubernetes.io/enforce": "baseline" } }).handler(request({ object: decoration([privileged]) }));
    expect(decision.response.status).toEqual({
      code: 422,
      reason: "Invalid",
      message: 'PodDecoration/sidecar: spec.template.containers[0].securityContext.privileged: Forbidden: pods in namespace shop would violate PodSecurity "baseline:latest": privileged (container "debugger" must not set securityContext.privileged=true)',
    });
  });

  it("admits with warnings what the pods' own settings decide, and what the warn level would flag", async () => {
    const hardened = { name: "proxy", image: "proxy:1", securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ["ALL"] } } };
    const restricted = await world({ labels: { "pod-security.kubernetes.io/enforce": "restricted" } }).handler(request({ object: decoration([hardened]) }));
    expect(restricted.response.allowed).toBe(true);
    expect(restricted.response.warnings).toEqual([
      'PodDecoration/sidecar: spec.template.containers[0].securityContext.seccompProfile.type: pods in namespace shop would violate PodSecurity "restricted:latest": seccompProfile (pod or container "proxy" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")',
      'PodDecoration/sidecar: spec.template.containers[0].securityContext.runAsNonRoot: pods in namespace shop would violate PodSecurity "restricted:latest": runAsNonRoot != true (pod or container "proxy" must set securityContext.runAsNonRoot=true)',
    ]);
    const warned = await world({ labels: { "pod-security.kubernetes.io/warn": "baseline" } }).handler(request({ object: decoration([privileged]) }));
    expect(warned.response.allowed).toBe(true);
    expect(warned.response.warnings).toEqual([
      'PodDecoration/sidecar: spec.template.containers[0].securityContext.privileged: pods in namespace shop would get a warning from PodSecurity "baseline:latest": privileged (container "debugger" must not set securityContext.privileged=true)',
    ]);
  });

  it("keeps the validation's own warnings beside the checks' (a decoration without a selector)", async () => {
    const object = decoration([privileged]);
    const { selector: _selector, ...spec } = object.spec;
    const decision = await world({ labels: { "pod-security.kubernetes.io/warn": "baseline" } }).handler(request({ object: { ...object, spec } }));
    expect(decision.response.allowed).toBe(true);
    expect(decision.response.warnings).toEqual([
      expect.stringMatching(/^spec\.selector: not set, so this decoration selects no pod/),
      expect.stringMatching(/^PodDecoration\/sidecar: spec\.template\.containers\[0\]\.securityContext\.privileged: pods in namespace shop would get a warning/),
    ]);
  });

  it("does not check an update that leaves the spec alone (the controller's finalizer), nor an invalid object twice", async () => {
    const { handler, asked } = world({ mayCreatePods: false, labels: { "pod-security.kubernetes.io/enforce": "restricted" } });
    const stored = decoration([privileged]);
    const withFinalizer = { ...stored, metadata: { ...stored.metadata, finalizers: ["poddecoration.kusionstack.io/protection"] } };
    expect((await handler(request({ operation: "UPDATE", object: withFinalizer, oldObject: stored }))).response.allowed).toBe(true);
    const invalid = await handler(request({ object: { ...stored, spec: { selector: {}, historyLimit: -1, template: {} } } }));
    expect(invalid.response.status?.code).toBe(422);
    expect(asked).toEqual([]);
  });

  it("refuses when the requester cannot be checked, rather than store a decoration unchecked", async () => {
    const decision = await world({ failing: true }).handler(request());
    expect(decision.response.allowed).toBe(false);
    expect(decision.response.status?.message).toBe("PodDecoration/sidecar: could not be checked, try again: connection refused");
    expect((await world().handler(request({ userInfo: {} }))).response.status?.code).toBe(403);
  });
});
