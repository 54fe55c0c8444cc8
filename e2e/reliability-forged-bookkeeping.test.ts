// Issue 30, "pinning an old sidecar", where the chart's bookkeeping policy is not installed (as
// here: serve writes its own webhook configurations and nothing else): a pod author rewrites a
// running CollaSet pod's revisions annotation and pd-* label to claim the next revision before
// it exists, the decoration then moves to that revision — and the pod still reaches the new
// sidecar image, because the rollout judges it by the image it runs, not by what it records.
// Runs on the simulated kubelet and on the real node (a reliability-* file).
import { afterAll, beforeAll, describe, expect } from "vitest";
import { parse } from "yaml";
import type { PodDecoration } from "../src/api/poddecoration.ts";
import { specRevision } from "../src/revision/revision-data.ts";
import { testImage } from "./node/test-images.ts";
import { apply, collaSetPods, collaSetYaml, decorationYaml, REVISIONS, sidecarsOf, waitSettled } from "./support/collaset-world.ts";
import { clients, eventually, kubectl, test } from "./support/cluster.ts";
import { serviceAccountIdentity } from "./support/identities.ts";
import { startKubelet, type Kubelet } from "./support/kubelet.ts";
import { startOperator, type Operator } from "./support/operator.ts";

const PD_LABEL = "poddecoration.kusionstack.io/pd-logging";
const kusion = { group: "apps.kusionstack.io", version: "v1alpha1" };

let operator: Operator;
let kubelet: Kubelet;
beforeAll(async () => {
  operator = await startOperator();
  kubelet = await startKubelet();
});
afterAll(async () => {
  await kubelet.stop();
  expect(await operator.stop()).toBe(0);
});

describe("a pod author who rewrites a running pod's bookkeeping", () => {
  test("pins nothing: the pod still reaches the decoration's new sidecar image", async ({ namespace }) => {
    const v1 = [`log-shipper=${testImage("sidecar", "1")}`];
    const v2 = [`log-shipper=${testImage("sidecar", "2")}`];
    await apply(collaSetYaml(namespace, { replicas: 1 }));
    await apply(decorationYaml(namespace, v1));
    const [before] = await waitSettled(namespace, 1, v1);
    const podName = before!.metadata!.name!;

    // The CollaSet holds still while the author prepares the pin: paused, nothing moves.
    await apply(collaSetYaml(namespace, { replicas: 1, paused: true }));
    // The next revision's name is the hash of its template: the author can know it in advance.
    const next = specRevision(parse(decorationYaml(namespace, v2)) as PodDecoration).name;
    const author = await serviceAccountIdentity(namespace, "app-team", [{ apiGroups: [""], resources: ["pods"], verbs: ["get", "patch"] }]);
    const pin = { metadata: { labels: { [PD_LABEL]: next }, annotations: { [REVISIONS]: JSON.stringify([{ name: "logging", revision: next }]) } } };
    const pinned = await kubectl(["patch", "pod", podName, `--kubeconfig=${author.kubeconfigPath}`, "-n", namespace, "--type=merge", "-p", JSON.stringify(pin)]);
    expect(pinned.code, pinned.stderr).toBe(0);

    await apply(decorationYaml(namespace, v2));
    await eventually(async () => {
      const decoration = (await clients().custom.getNamespacedCustomObject({ ...kusion, plural: "poddecorations", namespace, name: "logging" })) as { metadata: { generation: number }; status?: { observedGeneration?: number; updatedRevision?: string } };
      return decoration.status?.observedGeneration === decoration.metadata.generation && decoration.status.updatedRevision === next ? true : undefined;
    }, 30_000, `the decoration's updated revision to be ${next}`);
    // The pod records the updated revision but runs v1.
    const pod = (await collaSetPods(namespace)).find((candidate) => candidate.metadata?.name === podName);
    expect(sidecarsOf(pod!)).toEqual(v1);
    expect(pod!.metadata?.labels?.[PD_LABEL]).toBe(next);

    await apply(collaSetYaml(namespace, { replicas: 1 }));
    // Whatever the record said, the one pod ends running v2, recording what it runs.
    const [after] = await waitSettled(namespace, 1, v2);
    expect(JSON.parse(after!.metadata!.annotations![REVISIONS]!)).toEqual([{ name: "logging", revision: next }]);
  });
});
