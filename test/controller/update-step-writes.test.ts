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

/** A pod whose writes bump its resourceVersion and are logged; `expected` lists the versions the plan must see past. */
function writer(initial: Pod): { writer: StepWriter; writes: string[]; expected: string[] } {
  const writes: string[] = [];
  const expected: string[] = [];
  let current = initial;
  let version = 100;
  const write = (kind: string, next: Pod): Promise<Pod> => {
    writes.push(kind);
    current = { ...next, metadata: { ...next.metadata, resourceVersion: String(++version) } };
    return Promise.resolve(current);
  };
  return {
    writes,
    expected,
    writer: {
      pods: {
        jsonPatch: (_namespace: string, _name: string, operations: JsonPatchOperation[]) =>
          write(`labels:${operations.filter((operation) => operation.op !== "test").map((operation) => operation.op).join(",")}`, current),
        jsonPatchStatus: (_namespace: string, _name: string, operations: JsonPatchOperation[]) => {
          const { value } = operations.find((operation) => operation.op !== "test") as { value: unknown };
          const condition = (Array.isArray(value) ? value[0] : value) as { type: string; status: string };
          return write(`gate:${condition.status}`, { ...current, status: { conditions: [condition] } });
        },
      },
      nowMs: () => 1_000,
      expectNewer: (seen) => expected.push(seen.metadata?.resourceVersion ?? ""),
      record: () => {},
    },
  };
}

describe("update step writes", () => {
  it("start an operation and take the pod out of traffic in one step; the next plan waits for the last write", async () => {
    const start = pod("7", [gate("True")]);
    const { writer: stepWriter, writes, expected } = writer(start);
    await writeUpdateStep(stepWriter, { kind: "start-operation", pod: start });
    expect(writes).toEqual(["labels:add,add,add,add,add,add", "gate:False"]);
    // Past the pod as it was, and past the labelled pod the gate write started from.
    expect(expected).toEqual(["7", "101"]);
  });

  it("end an operation with the gate True first, then the labels; a gate already True is not written again", async () => {
    const operating = { [lifecycleLabel("operating")]: "1", [lifecycleLabel("operate")]: "2" };
    const outOfTraffic = pod("7", [gate("False")], operating);
    const first = writer(outOfTraffic);
    await writeUpdateStep(first.writer, { kind: "end-operation", pod: outOfTraffic, reason: "done" });
    expect(first.writes).toEqual(["gate:True", "labels:remove,remove"]);
    expect(first.expected).toEqual(["7", "101"]);

    const inTraffic = pod("7", [gate("True")], operating);
    const second = writer(inTraffic);
    await writeUpdateStep(second.writer, { kind: "end-operation", pod: inTraffic, reason: "done" });
    expect(second.writes).toEqual(["labels:remove,remove"]);
    expect(second.expected).toEqual(["7"]);
  });
});
