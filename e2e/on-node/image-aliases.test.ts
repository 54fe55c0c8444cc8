// Issue 31: one image under two tags on the node. The runtime then reports a container's image by
// one of its tags (not necessarily the one the spec names); a CollaSet whose pods are Ready must
// count them available all the same, and an in-place update must still be seen finishing.
import { execFileSync } from "node:child_process";
import { afterAll, beforeAll, describe, expect, inject } from "vitest";
import { testImage } from "../node/test-images.ts";
import { applyNodeCollaSet } from "../support/node-collaset.ts";
import { clients, eventually, test } from "../support/cluster.ts";
import { startOperator, type Operator } from "../support/operator.ts";

/** Sorts before every e2e.local image: the tag a runtime that reports the first one will report. */
const ALIAS = "e2e.local/aa-alias:3";
const ORIGINAL = testImage("init", "3");
const kusion = { group: "apps.kusionstack.io", version: "v1alpha1" };

function ctr(args: readonly string[]): string {
  const [program, ...leading] = inject("ctrCommand");
  return execFileSync(program!, [...leading, ...args], { encoding: "utf8" });
}

let operator: Operator;
beforeAll(async () => {
  ctr(["images", "tag", "--force", ORIGINAL, ALIAS]);
  operator = await startOperator();
});
afterAll(async () => {
  expect(await operator.stop()).toBe(0);
  ctr(["images", "rm", ALIAS]);
});

function collaSet(namespace: string, image: string): Promise<void> {
  return applyNodeCollaSet(namespace, { replicas: 3, image, spec: { updateStrategy: { rollingUpdate: { maxUnavailable: 3 } } } });
}

interface CollaSetStatus {
  observedGeneration?: number;
  readyReplicas?: number;
  availableReplicas?: number;
  updatedAvailableReplicas?: number;
}

async function status(namespace: string): Promise<CollaSetStatus & { generation: number }> {
  const object = (await clients().custom.getNamespacedCustomObject({ ...kusion, plural: "collasets", namespace, name: "web" })) as { metadata: { generation: number }; status?: CollaSetStatus };
  return { ...object.status, generation: object.metadata.generation };
}

describe("an image the node holds under two tags", () => {
  test("counts Ready pods available whichever tag the runtime reports, and sees an in-place update to it finish", async ({ namespace }) => {
    await collaSet(namespace, ORIGINAL);
    const reported = await eventually(async () => {
      const pods = (await clients().core.listNamespacedPod({ namespace, labelSelector: "app=web" })).items;
      const images = pods.flatMap((pod) => pod.status?.containerStatuses?.filter((entry) => entry.state?.running !== undefined).map((entry) => entry.image) ?? []);
      return images.length === 3 ? images : undefined;
    }, 90_000, "three running pods");
    // The premise: the runtime names the container's image by the other tag.
    expect(new Set(reported)).toEqual(new Set([ALIAS]));
    const ready = await eventually(async () => {
      const current = await status(namespace);
      return current.observedGeneration === current.generation && current.readyReplicas === 3 ? current : undefined;
    }, 60_000, "three Ready replicas in the CollaSet's status");
    expect(ready.availableReplicas).toBe(3);

    // In place to the other tag of the same image: the containers restart, and the update ends.
    await collaSet(namespace, ALIAS);
    await eventually(async () => {
      const current = await status(namespace);
      return current.observedGeneration === current.generation && current.updatedAvailableReplicas === 3 ? true : undefined;
    }, 90_000, "the update to the alias available on all three");
  });
});
