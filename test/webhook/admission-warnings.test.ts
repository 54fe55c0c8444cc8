// The PodDecoration and CollaSet webhooks return the warnings of src/api/*-warnings.ts:
// defaulting warnings from the mutating webhook, which sees the object as written, the others
// from the validating webhook, which sees it as it will be stored.
import { describe, expect, it } from "vitest";
import type { AdmissionRequest } from "../../src/webhook/admission-review.ts";
import { defaultCollaSets, defaultPodDecorations, validateCollaSets, validatePodDecorations } from "../../src/webhook/resource-admission.ts";

function request(kind: string, spec: Record<string, unknown>): AdmissionRequest {
  return {
    uid: "u1",
    kind: { group: "apps.kusionstack.io", version: "v1alpha1", kind },
    operation: "CREATE",
    namespace: "shop",
    name: "x",
    object: { apiVersion: "apps.kusionstack.io/v1alpha1", kind, metadata: { name: "x", namespace: "shop" }, spec },
  };
}

describe("admission warnings", () => {
  it("the mutating PodDecoration webhook warns about the targetPolicy it writes", () => {
    const { response } = defaultPodDecorations(request("PodDecoration", { selector: {}, template: { primaryContainers: [{ name: "app", image: "x:2" }] } }));
    expect(response.allowed).toBe(true);
    expect(response.warnings).toEqual([expect.stringMatching(/^spec\.template\.primaryContainers\[0\]\.targetPolicy: not set/)]);
  });

  it("the validating PodDecoration webhook warns about KusionStack differences, and admits", () => {
    const { response } = validatePodDecorations(request("PodDecoration", { updateStrategy: { rollingUpdate: { partition: 1, selector: {} } } }));
    expect(response.allowed).toBe(true);
    expect(response.warnings?.map((warning) => warning.slice(0, warning.indexOf(":")))).toEqual(["spec.selector", "spec.updateStrategy.rollingUpdate"]);
  });

  it("the validating CollaSet webhook names fields it does not act on; the mutating one adds nothing", () => {
    const spec = { selector: { matchLabels: { app: "web" } }, namingStrategy: { podNamingSuffixPolicy: "Sequential" }, template: { metadata: { labels: { app: "web" } }, spec: { containers: [{ name: "app", image: "x:1" }] } } };
    expect(validateCollaSets(request("CollaSet", spec)).response.warnings).toEqual([expect.stringMatching(/^spec\.namingStrategy\.podNamingSuffixPolicy: accepted/)]);
    expect(defaultCollaSets(request("CollaSet", spec)).response.warnings).toBeUndefined();
  });

  it("an invalid object gets its errors, not warnings", () => {
    const { response } = validatePodDecorations(request("PodDecoration", { historyLimit: -1 }));
    expect(response.allowed).toBe(false);
    expect(response.warnings).toBeUndefined();
  });
});
