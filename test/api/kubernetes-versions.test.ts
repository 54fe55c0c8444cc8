// What a decoration may use by the Kubernetes version of its cluster (docs/kubernetes-versions.md):
// each feature is refused below the minor where it is on by default, with the field, the version
// it needs and the cluster's version named; at and above that minor it passes.
import { describe, expect, it } from "vitest";
import { parseKubernetesVersion, TEMPLATE_FEATURES, unavailableTemplateFeatures, versionGatedFieldErrors, type KubernetesVersion } from "../../src/api/kubernetes-versions.ts";
import type { PodDecorationTemplate } from "../../src/api/poddecoration.ts";
import { withVersionGates } from "../../src/webhook/version-gates.ts";
import { validatePodDecorations } from "../../src/webhook/resource-admission.ts";
import type { AdmissionRequest } from "../../src/webhook/admission-review.ts";

const version = (gitVersion: string): KubernetesVersion => parseKubernetesVersion(gitVersion)!;

/** One template per feature, using it once, and the path it is used at. */
const uses: Record<string, [PodDecorationTemplate, string]> = {
  SidecarContainers: [{ initContainers: [{ name: "proxy", image: "envoy", restartPolicy: "Always" }] }, "spec.template.initContainers[0].restartPolicy"],
  PodLifecycleSleepAction: [{ containers: [{ name: "s", image: "x", lifecycle: { preStop: { sleep: { seconds: 5 } } } }] }, "spec.template.containers[0].lifecycle.preStop.sleep"],
  RecursiveReadOnlyMounts: [{ primaryContainers: [{ volumeMounts: [{ name: "v", mountPath: "/v", readOnly: true, recursiveReadOnly: "Enabled" }] }] }, "spec.template.primaryContainers[0].volumeMounts[0].recursiveReadOnly"],
  RelaxedEnvironmentVariableValidation: [{ containers: [{ name: "s", image: "x", env: [{ name: "1st:var", value: "x" }] }] }, "spec.template.containers[0].env[0].name"],
  PodLifecycleSleepActionAllowZero: [{ containers: [{ name: "s", image: "x", lifecycle: { preStop: { sleep: { seconds: 0 } } } }] }, "spec.template.containers[0].lifecycle.preStop.sleep.seconds"],
  InPlacePodVerticalScaling: [{ containers: [{ name: "s", image: "x", resizePolicy: [{ resourceName: "cpu", restartPolicy: "NotRequired" }] }] }, "spec.template.containers[0].resizePolicy"],
  ImageVolume: [{ volumes: [{ name: "tools", image: { reference: "tools:1" } }] }, "spec.template.volumes[0].image"],
  EnvFiles: [{ containers: [{ name: "s", image: "x", env: [{ name: "A", valueFrom: { fileKeyRef: { volumeName: "v", path: "env", key: "A" } } }] }] }, "spec.template.containers[0].env[0].valueFrom.fileKeyRef"],
  ContainerRestartRules: [{ containers: [{ name: "s", image: "x", restartPolicy: "Never" }] }, "spec.template.containers[0].restartPolicy"],
  RestartAllContainersOnContainerExits: [{ initContainers: [{ name: "s", image: "x", restartPolicy: "Always", restartPolicyRules: [{ action: "RestartAllContainers", exitCodes: { operator: "In", values: [42] } }] }] }, "spec.template.initContainers[0].restartPolicyRules[0].action"],
};

describe("parseKubernetesVersion", () => {
  it.each([
    ["v1.30.14", 1, 30],
    ["v1.37.2", 1, 37],
    ["v1.31.2+k3s1", 1, 31],
    ["v1.32.0-gke.1000", 1, 32],
    ["1.33", 1, 33],
  ])("reads %s", (gitVersion, major, minor) => {
    expect(parseKubernetesVersion(gitVersion)).toEqual({ major, minor, gitVersion });
  });

  it("reads no version from what is not one", () => {
    expect(parseKubernetesVersion("v0.0.0-master+$Format:%H$")).toBeUndefined();
    expect(parseKubernetesVersion("master")).toBeUndefined();
  });
});

describe("versionGatedFieldErrors", () => {
  it("has a template for every feature", () => {
    expect(Object.keys(uses).sort()).toEqual(TEMPLATE_FEATURES.map((feature) => feature.gate).sort());
  });

  it.each(TEMPLATE_FEATURES.map((feature) => [feature.gate, feature.since] as const))("%s: refused below 1.%i, naming the field and both versions; allowed from it", (gate, since) => {
    const [template, path] = uses[gate]!;
    const older = version(`v1.${String(since - 1)}.9`);
    const errors = versionGatedFieldErrors(template, "spec.template", older).filter((error) => error.reason.includes(`feature gate ${gate})`));
    expect(errors).toEqual([{ path, reason: expect.stringContaining(`need Kubernetes 1.${String(since)} or later (feature gate ${gate}); this cluster's API server is v1.${String(since - 1)}.9, which`) as unknown }]);
    expect(versionGatedFieldErrors(template, "spec.template", version(`v1.${String(since)}.0`)).filter((error) => error.reason.includes(gate))).toEqual([]);
  });

  it("leaves the newest version and an ordinary sidecar alone", () => {
    const all = Object.values(uses).map(([template]) => template);
    for (const template of all) expect(versionGatedFieldErrors(template, "spec.template", version("v1.37.2"))).toEqual([]);
    const plain: PodDecorationTemplate = { containers: [{ name: "s", image: "x", env: [{ name: "LOG_LEVEL", value: "debug" }], lifecycle: { preStop: { sleep: { seconds: 3 } } } }] };
    expect(versionGatedFieldErrors(plain, "spec.template", version("v1.30.14"))).toEqual([]);
  });

  it("lists what a version lacks for serve's log", () => {
    expect(unavailableTemplateFeatures(version("v1.30.14"))).toEqual([
      "recursiveReadOnly volume mounts (1.31, RecursiveReadOnlyMounts)",
      "environment variable names outside [-._a-zA-Z][-._a-zA-Z0-9]* (1.32, RelaxedEnvironmentVariableValidation)",
      "a lifecycle sleep of 0 seconds (1.33, PodLifecycleSleepActionAllowZero)",
      "container resize policies (in-place pod resize) (1.33, InPlacePodVerticalScaling)",
      "image volumes (1.35, ImageVolume)",
      "environment variables read from files (valueFrom.fileKeyRef) (1.35, EnvFiles)",
      "restart policies of regular containers and container restart rules (1.35, ContainerRestartRules)",
      "the RestartAllContainers restart rule action (1.36, RestartAllContainersOnContainerExits)",
    ]);
    expect(unavailableTemplateFeatures(version("v1.37.2"))).toEqual([]);
  });
});

describe("withVersionGates (the PodDecoration validating webhook)", () => {
  const request = (spec: unknown, operation: "CREATE" | "UPDATE" = "CREATE", oldSpec?: unknown): AdmissionRequest => ({
    uid: "u1",
    kind: { group: "apps.kusionstack.io", version: "v1alpha1", kind: "PodDecoration" },
    operation,
    namespace: "shop",
    name: "resize",
    object: { apiVersion: "apps.kusionstack.io/v1alpha1", kind: "PodDecoration", metadata: { name: "resize", namespace: "shop" }, spec },
    ...(oldSpec === undefined ? {} : { oldObject: { apiVersion: "apps.kusionstack.io/v1alpha1", kind: "PodDecoration", metadata: { name: "resize", namespace: "shop" }, spec: oldSpec } }),
  });
  const spec = { selector: { matchLabels: { app: "web" } }, template: uses.InPlacePodVerticalScaling![0] };

  it("refuses on an older cluster with the field, the version it needs and the cluster's", () => {
    const decision = withVersionGates(validatePodDecorations, () => version("v1.30.14"))(request(spec));
    expect(decision.result).toBe("rejected");
    expect(decision.response.status?.code).toBe(422);
    expect(decision.response.status?.message).toBe("PodDecoration/resize: spec.template.containers[0].resizePolicy: Forbidden: container resize policies (in-place pod resize) need Kubernetes 1.33 or later (feature gate InPlacePodVerticalScaling); this cluster's API server is v1.30.14, which drops the field from pods, so the decoration would not be enforced");
  });

  it("allows it on a newer cluster, before the version is known, and on an update that leaves the spec alone", () => {
    expect(withVersionGates(validatePodDecorations, () => version("v1.33.0"))(request(spec)).response.allowed).toBe(true);
    expect(withVersionGates(validatePodDecorations, () => undefined)(request(spec)).response.allowed).toBe(true);
    expect(withVersionGates(validatePodDecorations, () => version("v1.30.14"))(request(spec, "UPDATE", spec)).response.allowed).toBe(true);
  });
});
