// The writes of one update step: in what order, and which versions the next plan must see past.
import { describe, expect, it } from "vitest";
import { lifecycleLabel, SERVICE_READY_GATE } from "../../src/controller/lifecycle/pod-ops-lifecycle.ts";
import { writeUpdateStep, type StepWriter } from "../../src/controller/update-step-writes.ts";
import type { Pod } from "../../src/kube/objects.ts";
import type { JsonPatchOperation } from "../../src/kube/patch.ts";

const gate = (status: string) => ({ type: SERVICE_READY_GATE, status });

function pod(resourceVersion: string, conditions: { type: string; status: string }[], labels: Record<string, string> = {}): Pod {
  return { metadata: { namespace: "ns", name: "web-0", resourceVersion, labels }, spec: { containers: [{ name: "app", image: "app:1" }] }, status: { conditions } };
}

/** A pod whose writes bump its resourceVersion and are logged by endpoint and content; `expected` lists the versions the plan must see past. */
function writer(initial: Pod): { writer: StepWriter; writes: string[]; expected: string[] } {
  const writes: string[] = [];
  const expected: string[] = [];
  let version = 100;
  const write = (endpoint: string, operations: JsonPatchOperation[]): Promise<Pod> => {
    const labels = operations.filter((operation) => operation.path.startsWith("/metadata/labels/")).map((operation) => operation.op);
    const conditions = operations.filter((operation) => operation.path.startsWith("/status/conditions") && operation.op !== "test");
    const gates = conditions.map((operation) => (("value" in operation && !Array.isArray(operation.value) ? operation.value : (operation as { value: unknown[] }).value[0]) as { status: string }).status);
    const guarded = operations.some((operation) => operation.op === "test" && operation.path === "/metadata/resourceVersion" && operation.value === initial.metadata?.resourceVersion);
    writes.push(`${endpoint}${guarded ? " (guarded)" : ""}: ${[...(labels.length > 0 ? [`labels ${labels.join(",")}`] : []), ...gates.map((status) => `gate ${status}`)].join(", ")}`);
    return Promise.resolve({ ...initial, metadata: { ...initial.metadata, resourceVersion: String(++version) } });
  };
  return {
    writes,
    expected,
    writer: {
      pods: {
        jsonPatch: (_namespace: string, _name: string, operations: JsonPatchOperation[]) => write("pods", operations),
        jsonPatchStatus: (_namespace: string, _name: string, operations: JsonPatchOperation[]) => write("pods/status", operations),
      },
      nowMs: () => 1_000,
      expectNewer: (seen) => expected.push(seen.metadata?.resourceVersion ?? ""),
      record: () => {},
    },
  };
}

describe("update step writes", () => {
  it("start an operation and take the pod out of traffic in one write; the next plan waits for it", async () => {
    const start = pod("7", [gate("True")]);
    const { writer: stepWriter, writes, expected } = writer(start);
    await writeUpdateStep(stepWriter, { kind: "start-operation", pod: start });
    expect(writes).toEqual(["pods/status (guarded): labels add,add,add,add,add, gate False"]);
    expect(expected).toEqual(["7"]);
  });

  it("with PodTransitionRules to pass first, begin the operation with the pre-check label alone, the pod in traffic; leave traffic in one write once they pass", async () => {
    const start = pod("7", [gate("True")], { "podopslifecycle.kusionstack.io/service-available": "1" });
    const begun = writer(start);
    await writeUpdateStep(begun.writer, { kind: "start-operation", pod: start, checking: true });
    expect(begun.writes).toEqual(["pods/status (guarded): labels add,add,add"]);
    const checking = pod("8", [gate("True")], { [lifecycleLabel("operating")]: "1", [lifecycleLabel("operationType")]: "update", [lifecycleLabel("preCheck")]: "1", "podopslifecycle.kusionstack.io/service-available": "1" });
    const passed = writer(checking);
    await writeUpdateStep(passed.writer, { kind: "pass-pre-check", pod: checking });
    // pre-check and service-available go; pre-checked, the permission and preparing come; the gate goes False.
    expect(passed.writes).toEqual(["pods/status (guarded): labels remove,remove,add,add,add, gate False"]);
    expect(passed.expected).toEqual(["8"]);
  });

  it("end an operation with its labels removed and the gate True in one write; a gate already True is not written again", async () => {
    const operating = { [lifecycleLabel("operating")]: "1", [lifecycleLabel("operate")]: "2" };
    const outOfTraffic = pod("7", [gate("False")], operating);
    const first = writer(outOfTraffic);
    await writeUpdateStep(first.writer, { kind: "end-operation", pod: outOfTraffic, reason: "done" });
    expect(first.writes).toEqual(["pods/status (guarded): labels remove,remove, gate True"]);
    expect(first.expected).toEqual(["7"]);

    const inTraffic = pod("7", [gate("True")], operating);
    const second = writer(inTraffic);
    await writeUpdateStep(second.writer, { kind: "end-operation", pod: inTraffic, reason: "done" });
    expect(second.writes).toEqual(["pods/status (guarded): labels remove,remove"]);
    expect(second.expected).toEqual(["7"]);
  });

  it("turn the gate alone, and expect nothing when it is already as wanted", async () => {
    const ready = pod("7", [gate("False")]);
    const first = writer(ready);
    await writeUpdateStep(first.writer, { kind: "mark-service-ready", pod: ready });
    expect(first.writes).toEqual(["pods/status: gate True"]);
    expect(first.expected).toEqual(["7"]);

    const already = pod("7", [gate("True")]);
    const second = writer(already);
    await writeUpdateStep(second.writer, { kind: "mark-service-ready", pod: already });
    expect(second.writes).toEqual([]);
    expect(second.expected).toEqual([]);
  });
});
