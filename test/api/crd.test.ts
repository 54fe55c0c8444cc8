// The CRDs are generated from the schemas: the committed files must be what `make crds`
// writes now, and the generated schemas must be structural, carry the defaults and enums the
// runtime uses, and print the columns `kubectl get` shows.
import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { type CustomResourceDefinition, customResourceDefinitions, type JsonSchemaProps, toStructuralSchema } from "../../src/api/crd.ts";
import { StringEnum } from "../../src/api/openapi.ts";
import { crdFiles } from "../../src/cli/crds.ts";

function definition(plural: string): CustomResourceDefinition {
  const found = customResourceDefinitions().find((crd) => crd.spec.names.plural === plural);
  if (found === undefined) throw new Error(`no CRD for ${plural}`);
  return found;
}

function schemaAt(crd: CustomResourceDefinition, path: string): JsonSchemaProps {
  let node = crd.spec.versions[0]?.schema.openAPIV3Schema as JsonSchemaProps;
  for (const segment of path.split(".")) {
    node = segment === "[]" ? (node.items as JsonSchemaProps) : ((node.properties as Record<string, JsonSchemaProps>)[segment] as JsonSchemaProps);
    if (node === undefined) throw new Error(`no schema at ${path}`);
  }
  return node;
}

/** Kubernetes' structural-schema rules that apply to what we generate. */
function structuralViolations(node: JsonSchemaProps, path: string): string[] {
  const violations: string[] = [];
  const intOrString = node["x-kubernetes-int-or-string"] === true;
  const preserve = node["x-kubernetes-preserve-unknown-fields"] === true;
  if (node.type === undefined && !intOrString && !preserve) violations.push(`${path}: no type`);
  if (node.anyOf !== undefined && !intOrString) violations.push(`${path}: anyOf outside int-or-string`);
  for (const forbidden of ["const", "patternProperties", "$ref", "$id", "definitions", "additionalItems", "uniqueItems"]) {
    if (forbidden in node) violations.push(`${path}: ${forbidden}`);
  }
  if (node.properties !== undefined && node.additionalProperties !== undefined) violations.push(`${path}: properties with additionalProperties`);
  for (const [name, child] of Object.entries((node.properties ?? {}) as Record<string, JsonSchemaProps>)) violations.push(...structuralViolations(child, `${path}.${name}`));
  if (node.items !== undefined) violations.push(...structuralViolations(node.items as JsonSchemaProps, `${path}[]`));
  if (typeof node.additionalProperties === "object") violations.push(...structuralViolations(node.additionalProperties as JsonSchemaProps, `${path}{}`));
  return violations;
}

describe("generated CRDs", () => {
  it("match the committed config/crd files (run `make crds` after changing src/api)", () => {
    for (const file of crdFiles()) {
      const committed = readFileSync(new URL(`../../config/crd/${file.fileName}`, import.meta.url), "utf8");
      expect(committed, file.fileName).toBe(file.text);
    }
    expect(crdFiles().map((file) => file.fileName)).toEqual(["apps.kusionstack.io_collasets.yaml", "apps.kusionstack.io_operationjobs.yaml", "apps.kusionstack.io_poddecorations.yaml", "apps.kusionstack.io_podtransitionrules.yaml", "apps.kusionstack.io_resourcecontexts.yaml", "pod-decorator.io_clusterpoddecorations.yaml"]);
  });

  it("are copied unchanged into the Helm chart's crds/ (run `make crds`)", () => {
    const chartCrds = new URL("../../charts/pod-decorator/crds/", import.meta.url);
    expect(readdirSync(chartCrds).sort()).toEqual(crdFiles().map((file) => file.fileName).sort());
    for (const file of crdFiles()) expect(readFileSync(new URL(file.fileName, chartCrds), "utf8"), file.fileName).toBe(file.text);
  });

  it.each(customResourceDefinitions().map((crd) => [crd.metadata.name, crd] as const))("%s has a structural schema", (_name, crd) => {
    expect(structuralViolations(crd.spec.versions[0]?.schema.openAPIV3Schema ?? {}, "")).toEqual([]);
  });

  it("refuses to generate keywords a structural schema forbids", () => {
    expect(() => toStructuralSchema({ const: "x" })).toThrow(/const/);
    expect(() => toStructuralSchema({ type: "object", properties: { a: { description: "untyped" } } })).toThrow(/\.a: a structural schema needs a type/);
    expect(toStructuralSchema(StringEnum(["A", "B"], { default: "A" }))).toEqual({ type: "string", enum: ["A", "B"], default: "A" });
  });

  it("names, scopes and subresources PodDecoration as KusionStack does", () => {
    const crd = definition("poddecorations");
    expect(crd.metadata.name).toBe("poddecorations.apps.kusionstack.io");
    expect(crd.spec.names).toEqual({ kind: "PodDecoration", listKind: "PodDecorationList", plural: "poddecorations", singular: "poddecoration", shortNames: ["pd"] });
    expect(crd.spec.scope).toBe("Namespaced");
    expect(crd.spec.versions.map((version) => [version.name, version.served, version.storage])).toEqual([["v1alpha1", true, true]]);
    expect(crd.spec.versions[0]?.subresources?.status).toEqual({});
    expect(crd.spec.versions[0]?.additionalPrinterColumns.map((column) => [column.name, column.jsonPath])).toEqual([
      ["MATCHED", ".status.matchedPods"],
      ["INJECTED", ".status.injectedPods"],
      ["UPDATED", ".status.updatedPods"],
      ["UPDATED_READY", ".status.updatedReadyPods"],
      ["CURRENT_REVISION", ".status.currentRevision"],
      ["UPDATED_REVISION", ".status.updatedRevision"],
      ["AGE", ".metadata.creationTimestamp"],
    ]);
  });

  it("names and scopes ResourceContext as kuperator does: no status, contexts of ids with string data", () => {
    const crd = definition("resourcecontexts");
    expect(crd.metadata.name).toBe("resourcecontexts.apps.kusionstack.io");
    expect(crd.spec.names).toEqual({ kind: "ResourceContext", listKind: "ResourceContextList", plural: "resourcecontexts", singular: "resourcecontext", shortNames: ["rc"] });
    expect(crd.spec.versions[0]?.subresources).toBeUndefined();
    expect(schemaAt(crd, "spec.contexts")).toMatchObject({ type: "array", items: { type: "object", required: ["id"], properties: { id: { type: "integer" }, data: { type: "object", additionalProperties: { type: "string" } } } } });
  });

  it("names PodTransitionRule as kuperator does, with its status subresource, and keeps its detail's passed field required", () => {
    const crd = definition("podtransitionrules");
    expect(crd.spec.names).toEqual({ kind: "PodTransitionRule", listKind: "PodTransitionRuleList", plural: "podtransitionrules", singular: "podtransitionrule", shortNames: ["ptr"] });
    expect(crd.spec.versions[0]?.subresources).toEqual({ status: {} });
    expect(schemaAt(crd, "spec.rules").items).toMatchObject({ properties: { availablePolicy: { properties: { maxUnavailableValue: { "x-kubernetes-int-or-string": true } } }, webhook: { required: ["clientConfig"] } } });
    expect(schemaAt(crd, "status.details").items).toMatchObject({ required: ["passed"] });
    expect(crd.spec.versions[0]?.additionalPrinterColumns.map((column) => column.name)).toEqual(["RULES", "UPDATED", "AGE"]);
  });

  it("carries PodDecoration's enums, defaults and minimums, and the KusionStack spec.weight", () => {
    const crd = definition("poddecorations");
    // KusionStack's selector is optional (an unset one selects no pod), its historyLimit 0 means 20.
    expect(schemaAt(crd, "spec").required).toBeUndefined();
    expect(schemaAt(crd, "spec.historyLimit")).toMatchObject({ type: "integer", minimum: 0, default: 20 });
    expect(schemaAt(crd, "spec.weight")).toMatchObject({ type: "integer" });
    expect(schemaAt(crd, "spec.injectStrategy.weight").default).toBeUndefined();
    expect(schemaAt(crd, "spec.updateStrategy.rollingUpdate.partition")).toMatchObject({ type: "integer", minimum: 0 });
    expect(schemaAt(crd, "spec.template.metadata.[].patchPolicy")).toMatchObject({ type: "string", enum: ["Retain", "Overwrite", "MergePatchJson"], default: "Retain" });
    // No schema default: unset means ByName with a name and All without one (defaulting writes it).
    expect(schemaAt(crd, "spec.template.primaryContainers.[].targetPolicy")).toMatchObject({ enum: ["ByName", "All", "First", "Last"] });
    expect(schemaAt(crd, "spec.template.primaryContainers.[].targetPolicy").default).toBeUndefined();
    expect(schemaAt(crd, "spec.template.containers.[].injectPolicy")).toMatchObject({ enum: ["BeforePrimaryContainer", "AfterPrimaryContainer"], default: "BeforePrimaryContainer" });
    // Sidecars keep every Container field the schema does not declare (probes, securityContext…).
    expect(schemaAt(crd, "spec.template.containers.[]")["x-kubernetes-preserve-unknown-fields"]).toBe(true);
    expect(schemaAt(crd, "spec.template.volumes.[]")).toMatchObject({ required: ["name"], "x-kubernetes-preserve-unknown-fields": true });
  });

  it("gives CollaSet its short name, scale subresource, defaults and int-or-string maxUnavailable", () => {
    const crd = definition("collasets");
    expect(crd.spec.names.shortNames).toEqual(["cls"]);
    expect(crd.spec.versions[0]?.subresources).toEqual({ status: {}, scale: { specReplicasPath: ".spec.replicas", statusReplicasPath: ".status.replicas" } });
    expect(crd.spec.versions[0]?.additionalPrinterColumns.map((column) => column.name)).toEqual(["DESIRED", "CURRENT", "UPDATED", "UPDATED_READY", "AVAILABLE", "CURRENT_REVISION", "UPDATED_REVISION", "AGE"]);
    expect(schemaAt(crd, "spec.updateStrategy")).toMatchObject({ default: {} });
    expect(schemaAt(crd, "spec.updateStrategy.podUpgradePolicy")).toMatchObject({ enum: ["Recreate", "InPlaceIfPossible", "InPlaceOnly", "ReCreate", "Replace"], default: "InPlaceIfPossible" });
    expect(schemaAt(crd, "spec.updateStrategy.rollingUpdate.maxUnavailable")).toEqual({
      anyOf: [{ type: "integer" }, { type: "string" }],
      "x-kubernetes-int-or-string": true,
      default: 1,
      description: expect.any(String) as string,
    });
    expect(schemaAt(crd, "spec.replicas")).toMatchObject({ minimum: 0 });
    expect(schemaAt(crd, "spec.template")["x-kubernetes-preserve-unknown-fields"]).toBe(true);
  });

  it("carries Kubernetes' own limits on names and label values, and no other string limit", () => {
    const dns1123Label = { maxLength: 63, pattern: "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$" };
    const labelValue = { maxLength: 63, pattern: "^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$" };
    const dns1123Subdomain = { maxLength: 253, pattern: "^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$" };
    const selector = (path: string) => ({ [`${path}.matchLabels{}`]: labelValue, [`${path}.matchExpressions[].values[]`]: labelValue });
    const podSpec = (path: string) => ({ [`${path}.initContainers[].name`]: dns1123Label, [`${path}.containers[].name`]: dns1123Label, [`${path}.volumes[].name`]: dns1123Label });
    expect(stringLimits(definition("poddecorations"))).toEqual({
      ...selector("spec.selector"),
      ...selector("spec.updateStrategy.rollingUpdate.selector"),
      "spec.template.metadata[].labels{}": labelValue,
      ...podSpec("spec.template"),
      "spec.template.runtimeClassName": dns1123Subdomain,
    });
    expect(stringLimits(definition("collasets"))).toEqual({
      ...selector("spec.selector"),
      "spec.template.metadata.labels{}": labelValue,
      ...podSpec("spec.template.spec"),
    });
  });
});

/** Every maxLength and pattern in a CRD's spec schema, by path (`[]` an array's items, `{}` a map's values). */
function stringLimits(crd: CustomResourceDefinition): Record<string, { maxLength: unknown; pattern: unknown }> {
  const found: Record<string, { maxLength: unknown; pattern: unknown }> = {};
  const walk = (node: JsonSchemaProps, path: string): void => {
    if (node.maxLength !== undefined || node.pattern !== undefined) found[path] = { maxLength: node.maxLength, pattern: node.pattern };
    for (const [name, child] of Object.entries((node.properties ?? {}) as Record<string, JsonSchemaProps>)) walk(child, path === "" ? name : `${path}.${name}`);
    if (node.items !== undefined) walk(node.items as JsonSchemaProps, `${path}[]`);
    if (typeof node.additionalProperties === "object") walk(node.additionalProperties as JsonSchemaProps, `${path}{}`);
  };
  walk(schemaAt(crd, "spec"), "spec");
  return found;
}
