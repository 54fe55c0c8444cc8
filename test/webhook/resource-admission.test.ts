import jsonpatch from "fast-json-patch";
import { describe, expect, it } from "vitest";
import type { AdmissionRequest } from "../../src/webhook/admission-review.ts";
import { defaultCollaSets, defaultPodDecorations, defaultPodTransitionRules, validateCollaSets, validatePodDecorations, validatePodTransitionRules } from "../../src/webhook/resource-admission.ts";

const kusion = (kind: string) => ({ group: "apps.kusionstack.io", version: "v1alpha1", kind });

function pdRequest(spec: Record<string, unknown>, overrides: Partial<AdmissionRequest> = {}): AdmissionRequest {
  return {
    uid: "u1",
    kind: kusion("PodDecoration"),
    operation: "CREATE",
    namespace: "team-a",
    name: "logging",
    object: { apiVersion: "apps.kusionstack.io/v1alpha1", kind: "PodDecoration", metadata: { name: "logging", namespace: "team-a" }, spec },
    ...overrides,
  };
}

const validSpec = { selector: { matchLabels: { app: "web" } }, template: { containers: [{ name: "sidecar", image: "fluent-bit:3" }] } };

describe("PodDecoration admission", () => {
  it("writes the schema defaults as a JSON Patch", () => {
    const request = pdRequest(validSpec);
    const { response } = defaultPodDecorations(request);
    const patch = JSON.parse(Buffer.from(response.patch!, "base64").toString()) as jsonpatch.Operation[];
    const defaulted = jsonpatch.applyPatch(structuredClone(request.object), patch, true, false).newDocument as { spec: { historyLimit: number; template: { containers: { injectPolicy: string }[] } } };
    expect(defaulted.spec.historyLimit).toBe(20);
    expect(defaulted.spec.template.containers[0]!.injectPolicy).toBe("BeforePrimaryContainer");
  });

  it.each([
    [{ ...validSpec, historyLimit: -1 }, "PodDecoration/logging: spec.historyLimit: Invalid value: -1: must be greater than or equal to 0"],
    [{ ...validSpec, updateStrategy: { rollingUpdate: { partition: 1, selector: { matchLabels: { "canary!": "true" } } } } }, "PodDecoration/logging: spec.updateStrategy.rollingUpdate.selector.matchLabels: "],
  ])("refuses an invalid decoration with its field path and reason (%#)", (spec, message) => {
    const decision = validatePodDecorations(pdRequest(spec));
    expect(decision.result).toBe("rejected");
    expect(decision.response.allowed).toBe(false);
    expect(decision.response.status?.code).toBe(422);
    expect(decision.response.status?.message).toContain(message);
  });

  it("allows a valid decoration and leaves an invalid one to validation when defaulting", () => {
    expect(validatePodDecorations(pdRequest(validSpec)).response).toEqual({ uid: "u1", allowed: true });
    expect(defaultPodDecorations(pdRequest({ ...validSpec, historyLimit: "many" })).response).toEqual({ uid: "u1", allowed: true });
  });

  it("refuses a decoration nested thousands of levels deep with where, and does not default it", () => {
    // The CRD preserves unknown fields in containers, so the API server stores such a thing.
    let deep: unknown = 1;
    for (let level = 0; level < 20_000; level++) deep = [deep];
    const spec = { ...validSpec, template: { containers: [{ name: "sidecar", image: "fluent-bit:3", extra: deep }] } };
    const decision = validatePodDecorations(pdRequest(spec));
    expect(decision.response.status).toEqual({
      code: 422,
      reason: "Invalid",
      message: "PodDecoration/logging: spec.template.containers[0].extra[0][0][0][0][0][0][0]...: Invalid value: nests deeper than 100 levels",
    });
    expect(defaultPodDecorations(pdRequest(spec)).response).toEqual({ uid: "u1", allowed: true });
  });

  it("lets an object being deleted be updated even when it is invalid, so its finalizer can go", () => {
    const request = pdRequest({ ...validSpec, historyLimit: 0 }, { operation: "UPDATE" });
    (request.object as { metadata: Record<string, unknown> }).metadata.deletionTimestamp = "2026-11-21T00:00:00Z";
    expect(validatePodDecorations(request).response.allowed).toBe(true);
  });

  it("ignores the status subresource and other kinds", () => {
    const invalid = { ...validSpec, historyLimit: 0 };
    expect(validatePodDecorations(pdRequest(invalid, { subResource: "status", operation: "UPDATE" })).response.allowed).toBe(true);
    expect(validatePodDecorations(pdRequest(invalid, { kind: kusion("CollaSet") })).response.allowed).toBe(true);
  });
});

describe("CollaSet admission", () => {
  const collaSet = (selector: Record<string, string>) => ({
    uid: "u2",
    kind: kusion("CollaSet"),
    operation: "CREATE" as const,
    object: {
      apiVersion: "apps.kusionstack.io/v1alpha1",
      kind: "CollaSet",
      metadata: { name: "web", namespace: "team-a" },
      spec: { replicas: 3, selector: { matchLabels: selector }, template: { metadata: { labels: { app: "web" } }, spec: { containers: [{ name: "app", image: "web:1" }] } } },
    },
  });

  it("refuses a selector that does not match the template labels", () => {
    const decision = validateCollaSets(collaSet({ app: "other" }));
    expect(decision.response.status?.message).toBe("CollaSet/web: spec.template.metadata.labels: Invalid value: {\"app\":\"web\"}: `selector` does not match template `labels`");
  });

  it("refuses a CollaSet nested deeper than any is, without defaulting it", () => {
    const request = collaSet({ app: "web" });
    let deep: unknown = 1;
    for (let level = 0; level < 20_000; level++) deep = { a: deep };
    (request.object.spec as Record<string, unknown>).replicas = deep;
    expect(validateCollaSets(request).response.status?.message).toMatch(/^CollaSet\/web: spec\.replicas\.a\.a(\.a)*\.\.\.: Invalid value: nests deeper than 100 levels$/);
    expect(defaultCollaSets(request).response).toEqual({ uid: "u2", allowed: true });
  });

  it("defaults the upgrade policy", () => {
    const request = collaSet({ app: "web" });
    const patch = JSON.parse(Buffer.from(defaultCollaSets(request).response.patch!, "base64").toString()) as jsonpatch.Operation[];
    const defaulted = jsonpatch.applyPatch(structuredClone(request.object), patch, true, false).newDocument as unknown as { spec: { updateStrategy: { podUpgradePolicy: string } } };
    expect(defaulted.spec.updateStrategy.podUpgradePolicy).toBe("InPlaceIfPossible");
  });
});

describe("PodTransitionRule admission", () => {
  const request = (spec: Record<string, unknown>): AdmissionRequest => ({
    uid: "u3",
    kind: kusion("PodTransitionRule"),
    operation: "CREATE",
    namespace: "team-a",
    name: "budget",
    object: { apiVersion: "apps.kusionstack.io/v1alpha1", kind: "PodTransitionRule", metadata: { name: "budget", namespace: "team-a" }, spec },
  });
  const webhookRule = { name: "hook", webhook: { clientConfig: { url: "https://checker/check", poll: { url: "https://checker/poll" } }, failurePolicy: "Ignore" } };

  it("writes kuperator's poll defaults, and warns about what is accepted and not acted on", () => {
    const written = request({ selector: { matchLabels: { app: "web" } }, rules: [webhookRule] });
    const { response } = defaultPodTransitionRules(written);
    const patch = JSON.parse(Buffer.from(response.patch!, "base64").toString()) as jsonpatch.Operation[];
    expect(jsonpatch.applyPatch(structuredClone(written.object), patch, true, false).newDocument).toMatchObject({ spec: { rules: [{ webhook: { clientConfig: { poll: { intervalSeconds: 5, timeoutSeconds: 60 } } } }] } });
    const validated = validatePodTransitionRules(request({ selector: { matchLabels: { app: "web" } }, rules: [webhookRule] }));
    expect(validated.response.allowed).toBe(true);
    expect(validated.response.warnings).toEqual([expect.stringMatching(/^spec\.rules\[0\]\.webhook\.failurePolicy: accepted so kuperator manifests apply, but not acted on/)]);
  });

  it("refuses a rule without a selector, or a budget without values, naming the fields", () => {
    const decision = validatePodTransitionRules(request({ rules: [{ name: "budget", availablePolicy: {} }] }));
    expect(decision.response.status?.message).toBe("PodTransitionRule/budget: spec.selector: Required value; PodTransitionRule/budget: spec.rules[0].availablePolicy: Invalid value: {}: minAvailableValue and maxUnavailableValue must have at least one configured");
  });
});
