// Issue 30, "a decoration can be made undeletable": a pod author makes a pod that records the
// decoration and names the CollaSet as its controller (its real UID, read off a replica), keeps
// it with a finalizer of their own and deletes it. A terminating pod drops nothing and must hold
// nothing: once the CollaSet's real pods are clean, the decoration goes.
// Runs on the simulated kubelet and on the real node (a reliability-* file).
import { afterAll, beforeAll, describe, expect } from "vitest";
import { testImage } from "./node/test-images.ts";
import { apply, collaSetYaml, decorationYaml, REVISIONS, waitSettled } from "./support/collaset-world.ts";
import { clients, eventually, kubectl, test } from "./support/cluster.ts";
import { serviceAccountIdentity } from "./support/identities.ts";
import { startKubelet, type Kubelet } from "./support/kubelet.ts";
import { startOperator, type Operator } from "./support/operator.ts";

const HOLD = "e2e.example.com/hold";
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

describe("a terminating pod that records a decoration and names its CollaSet", () => {
  test("does not keep the decoration from being deleted", async ({ namespace }) => {
    const v1 = [`log-shipper=${testImage("sidecar")}`];
    await apply(collaSetYaml(namespace, { replicas: 1 }));
    await apply(decorationYaml(namespace, v1));
    const [replica] = await waitSettled(namespace, 1, v1);
    const owner = replica!.metadata!.ownerReferences!.find((reference) => reference.controller === true)!;

    const author = await serviceAccountIdentity(namespace, "app-team", [{ apiGroups: [""], resources: ["pods"], verbs: ["create", "delete", "get"] }]);
    const holder = {
      apiVersion: "v1",
      kind: "Pod",
      metadata: {
        name: "holder",
        // Selected by the decoration: the webhook renders it in, so the pod records it.
        labels: { app: "web" },
        ownerReferences: [{ apiVersion: owner.apiVersion, kind: owner.kind, name: owner.name, uid: owner.uid, controller: true }],
        finalizers: [HOLD],
      },
      spec: { terminationGracePeriodSeconds: 0, containers: [{ name: "app", image: testImage("app") }] },
    };
    const created = await kubectl(["create", `--kubeconfig=${author.kubeconfigPath}`, "-n", namespace, "-o", "json", "-f", "-"], JSON.stringify(holder));
    expect(created.code, created.stderr).toBe(0);
    expect(JSON.parse((JSON.parse(created.stdout) as { metadata: { annotations: Record<string, string> } }).metadata.annotations[REVISIONS]!)).toEqual(JSON.parse(replica!.metadata!.annotations![REVISIONS]!));
    try {
      const deleted = await kubectl(["delete", "pod", "holder", `--kubeconfig=${author.kubeconfigPath}`, "-n", namespace, "--wait=false"]);
      expect(deleted.code, deleted.stderr).toBe(0);

      await clients().custom.deleteNamespacedCustomObject({ ...kusion, plural: "poddecorations", namespace, name: "logging" });
      // The CollaSet's own pod loses the sidecar; then nothing live carries the decoration.
      await eventually(async () => {
        const gone = await clients().custom.getNamespacedCustomObject({ ...kusion, plural: "poddecorations", namespace, name: "logging" }).then(() => false, (error: unknown) => {
          if ((error as { code?: number }).code === 404) return true;
          throw error;
        });
        return gone ? true : undefined;
      }, 90_000, "the decoration gone, the terminating holder notwithstanding");
      // The holder is still there, terminating: it was not what let the decoration go.
      const still = await clients().core.readNamespacedPod({ namespace, name: "holder" });
      expect(still.metadata?.deletionTimestamp).toBeDefined();
    } finally {
      await kubectl(["patch", "pod", "holder", "-n", namespace, "--type=json", "-p", JSON.stringify([{ op: "remove", path: "/metadata/finalizers" }])]);
    }
  });
});
