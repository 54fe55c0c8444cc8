// OperationJob: kuperator's schema, its webhook's defaults and validation, with field paths.
import { describe, expect, it } from "vitest";
import { formatFieldErrors } from "../../src/api/field-errors.ts";
import { defaultOperationJob, operationJobWarnings, validateOperationJob, type OperationJob } from "../../src/api/operationjob.ts";
import { operationJobDefinition } from "../../src/api/crd.ts";

function job(change: (value: OperationJob) => void = () => undefined): OperationJob {
  const value: OperationJob = { apiVersion: "apps.kusionstack.io/v1alpha1", kind: "OperationJob", metadata: { name: "swap", namespace: "shop" }, spec: { action: "Replace", targets: [{ name: "web-0" }, { name: "web-1" }], partition: 1 } };
  change(value);
  return value;
}

const messages = (value: OperationJob) => formatFieldErrors("OperationJob", "swap", validateOperationJob(value));

describe("OperationJob validation", () => {
  it("accepts kuperator's manifests", () => {
    expect(messages(job())).toEqual([]);
    expect(messages(job((value) => {
      value.spec.operationDelaySeconds = 5;
      value.spec.activeDeadlineSeconds = 10;
      value.spec.TTLSecondsAfterFinished = 10;
    }))).toEqual([]);
  });

  it("refuses what kuperator's webhook refuses, and names that name no pod, each with its field path", () => {
    expect(messages(job((value) => {
      delete value.spec.action;
      value.spec.targets = [{ name: "web-0", containers: ["app", "app"] }, { name: "web-0" }, { name: "other/web-2" }, {}];
      value.spec.activeDeadlineSeconds = 0;
      value.spec.partition = -1;
    }))).toEqual([
      "OperationJob/swap: spec.partition: Invalid value: -1: must be greater than or equal to 0",
      "OperationJob/swap: spec.activeDeadlineSeconds: Invalid value: 0: must be greater than or equal to 1",
    ]);
    expect(messages(job((value) => {
      delete value.spec.action;
      value.spec.targets = [{ name: "web-0", containers: ["app", "app"] }, { name: "web-0" }, { name: "other/web-2" }, {}];
    }))).toEqual([
      "OperationJob/swap: spec.action: Required value: spec.action should not be empty",
      "OperationJob/swap: spec.targets[0].containers[1]: Duplicate value: \"app\"",
      "OperationJob/swap: spec.targets[1].name: Duplicate value: \"web-0\"",
      expect.stringMatching(/^OperationJob\/swap: spec\.targets\[2\]\.name: Invalid value: "other\/web-2": /),
      "OperationJob/swap: spec.targets[3].name: Required value",
    ]);
    expect(messages(job((value) => delete value.spec.targets))).toEqual(["OperationJob/swap: spec.targets: Required value: target can not be empty"]);
  });

  it("writes kuperator's deadline and time-to-live defaults", () => {
    expect(defaultOperationJob(job()).spec).toMatchObject({ activeDeadlineSeconds: 10_800, TTLSecondsAfterFinished: 1_800 });
  });

  it("warns about an action nothing performs, and containers a Replace does not read", () => {
    expect(operationJobWarnings(job((value) => (value.spec.action = "Restart")))).toEqual([expect.stringMatching(/^spec\.action: "Restart" is not an action/)]);
    expect(operationJobWarnings(job((value) => (value.spec.targets = [{ name: "web-0", containers: ["app"] }])))).toEqual([expect.stringMatching(/^spec\.targets\[\]\.containers:/)]);
  });

  it("keeps the action and targets immutable and the partition from going down in the CRD's CEL, which the API server checks on every write", () => {
    const schema = operationJobDefinition().spec.versions[0]!.schema.openAPIV3Schema as { properties: { spec: { properties: Record<string, Record<string, unknown>>; "x-kubernetes-validations": unknown } } };
    const spec = schema.properties.spec;
    expect(spec.properties.action!["x-kubernetes-validations"]).toEqual([{ rule: "self == oldSelf", message: "spec.action is immutable" }]);
    expect(spec.properties.targets!["x-kubernetes-validations"]).toEqual([{ rule: "self == oldSelf", message: "spec.targets is immutable" }]);
    expect(spec.properties.targets!.maxItems).toBe(5000);
    expect(spec["x-kubernetes-validations"]).toEqual([expect.objectContaining({ message: "spec.partition should not be decreased" })]);
    expect(operationJobDefinition().spec.names.shortNames).toEqual(["opj"]);
    expect(operationJobDefinition().spec.versions[0]!.additionalPrinterColumns.map((column) => column.name)).toEqual(["PROGRESS", "ACTION", "SUCCEEDED", "FAILED", "TOTAL", "AGE"]);
  });
});
