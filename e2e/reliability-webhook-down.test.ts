// Issue 8: the pod webhook unreachable (its URL points at a closed port, as when no replica
// serves it) while the controllers keep running. CollaSet pods do not depend on it: the
// controller renders their decorations itself, so the pods it creates are decorated whatever
// the webhook does; only a pod someone else creates for a CollaSet can escape, and the status
// says so (`details[].pods[].escaped`) until the controller has recreated it decorated. A bare
// pod admitted without the webhook stays undecorated (decorations are applied at creation
// only); "detected" for it means the decoration's status counts it as matched but not
// injected. With failurePolicy Fail nothing is admitted meanwhile, no pod is deleted for a
// replacement that cannot be created, and everything proceeds once the webhook is back.
import type { V1Pod } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect } from "vitest";
import { clients, eventually, kubectl, test } from "./support/cluster.ts";
import {
  apply, collaSetPods, collaSetYaml, decorationYaml, expectConverged, INSTANCE_ID, readCollaSet, readDecoration, REVISIONS, sidecarsOf, TEMPLATE_REVISION, waitSettled,
} from "./support/collaset-world.ts";
import { startKubelet, type Kubelet } from "./support/kubelet.ts";
import { freePort, startOperator, troubleLines, type Operator } from "./support/operator.ts";

const v1 = ["log-shipper=e2e.local/sidecar:1"];
const withMetrics = ["log-shipper=e2e.local/sidecar:1", "metrics=e2e.local/logger:1"];
const POD_WEBHOOK = "pods.pod-decorator.kusionstack.io";

let kubelet: Kubelet;
beforeAll(async () => {
  kubelet = await startKubelet();
});
afterAll(async () => {
  await kubelet.stop();
});

/** Points the pod webhook at url; returns the URL it had. */
async function setPodWebhookUrl(url: string): Promise<string> {
  const { admission } = clients();
  const configuration = await admission.readMutatingWebhookConfiguration({ name: "pod-decorator" });
  const index = configuration.webhooks?.findIndex((webhook) => webhook.name === POD_WEBHOOK) ?? -1;
  const previous = configuration.webhooks?.[index]?.clientConfig.url;
  if (index < 0 || previous === undefined) throw new Error("no pod webhook with a URL to redirect");
  await admission.patchMutatingWebhookConfiguration({
    name: "pod-decorator",
    body: [
      { op: "test", path: `/webhooks/${index}/name`, value: POD_WEBHOOK },
      { op: "replace", path: `/webhooks/${index}/clientConfig/url`, value: url },
    ],
  });
  return previous;
}

function probePod(): V1Pod {
  return { metadata: { name: "probe", labels: { app: "web" } }, spec: { containers: [{ name: "app", image: "e2e.local/app:1" }] } };
}

/** What the API server does with a pod right now (it picks up webhook configuration changes after a delay). */
async function podAdmission(namespace: string): Promise<"decorated" | "undecorated" | "refused"> {
  try {
    const pod = await clients().core.createNamespacedPod({ namespace, dryRun: "All", body: probePod() });
    return pod.spec?.containers.some((container) => container.name === "log-shipper") === true ? "decorated" : "undecorated";
  } catch (error) {
    if (/failed calling webhook/.test(String((error as { body?: unknown }).body ?? error))) return "refused";
    throw error;
  }
}

async function waitForAdmission(namespace: string, wanted: Awaited<ReturnType<typeof podAdmission>>): Promise<void> {
  await eventually(async () => ((await podAdmission(namespace)) === wanted ? true : undefined), 30_000, `pods to be ${wanted} at admission`);
}

async function createPod(namespace: string, body: V1Pod): Promise<V1Pod> {
  return clients().core.createNamespacedPod({ namespace, body });
}

describe("pod webhook down", () => {
  test("failurePolicy Ignore: CollaSet pods never depend on it, an escaped one is reported and then decorated, a bare one is counted as not injected", async ({ namespace, onTestFailed }) => {
    const operator = await startOperator({ args: ["--failure-policy=Ignore"] });
    onTestFailed(() => console.log(`serve's warnings and errors:\n${troubleLines(operator.logs())}`));
    try {
      await apply(collaSetYaml(namespace, { replicas: 3, maxUnavailable: 1 }));
      await apply(decorationYaml(namespace, v1));
      await waitSettled(namespace, 3, v1);
      // Paused with room for a fourth pod, so that a pod made by someone else can take the slot.
      await apply(collaSetYaml(namespace, { replicas: 4, maxUnavailable: 1, paused: true }));

      const webhookUrl = await setPodWebhookUrl(`https://127.0.0.1:${await freePort()}/mutate-pods`);
      await waitForAdmission(namespace, "undecorated");
      const collaSet = await readCollaSet(namespace);
      const bare = await createPod(namespace, { metadata: { name: "bare", labels: { app: "web" } }, spec: { containers: [{ name: "app", image: "e2e.local/app:1" }] } });
      const escaped = await createPod(namespace, {
        metadata: {
          generateName: "web-",
          labels: { app: "web", [INSTANCE_ID]: "3", [TEMPLATE_REVISION]: collaSet.status?.updatedRevision ?? "" },
          ownerReferences: [{ apiVersion: "apps.kusionstack.io/v1alpha1", kind: "CollaSet", name: "web", uid: collaSet.metadata.uid, controller: true, blockOwnerDeletion: true }],
        },
        spec: { containers: [{ name: "app", image: "e2e.local/app:1", env: [{ name: "MODE", value: "blue" }] }] },
      });
      for (const pod of [bare, escaped]) {
        expect(pod.spec?.containers.map((container) => container.name)).toEqual(["app"]);
        expect(pod.metadata?.annotations?.[REVISIONS]).toBeUndefined();
      }
      // Detected: the escaped CollaSet pod by name, the bare pod as matched but not injected.
      const detected = await eventually(async () => {
        const status = (await readDecoration(namespace)).status;
        const escapedNames = status?.details?.flatMap((detail) => detail.pods ?? []).filter((pod) => pod.escaped === true).map((pod) => pod.name);
        return status?.matchedPods === 5 ? { matched: status.matchedPods, injected: status.injectedPods, escaped: escapedNames } : undefined;
      }, 30_000, "the decoration's status to count the new pods");
      expect(detected).toEqual({ matched: 5, injected: 3, escaped: [escaped.metadata?.name] });

      // Resumed while the webhook is still down: the controller decorates the escaped pod itself
      // (by recreation: a sidecar cannot be added to a live pod) and creates a fifth, decorated.
      await apply(collaSetYaml(namespace, { replicas: 5, maxUnavailable: 1 }));
      await expectConverged(namespace, { replicas: 5, sidecars: v1, others: { decorated: 0, undecorated: 1 } });
      const pods = await collaSetPods(namespace);
      expect(pods.some((pod) => pod.metadata?.uid === escaped.metadata?.uid)).toBe(false);
      expect(await podAdmission(namespace)).toBe("undecorated");

      await setPodWebhookUrl(webhookUrl);
      await waitForAdmission(namespace, "decorated");
      // Nothing updates a bare pod after creation: it stays as admitted, and stays counted.
      const bareNow = await clients().core.readNamespacedPod({ namespace, name: "bare" });
      expect([bareNow.metadata?.uid, bareNow.spec?.containers.map((container) => container.name)]).toEqual([bare.metadata?.uid, ["app"]]);
      await expectConverged(namespace, { replicas: 5, sidecars: v1, others: { decorated: 0, undecorated: 1 } });
    } finally {
      expect(await operator.stop()).toBe(0);
    }
  });

  test("failurePolicy Fail: nothing is admitted meanwhile, no pod is deleted for a replacement that cannot be made, all proceeds after recovery", async ({ namespace, onTestFailed }) => {
    const operator: Operator = await startOperator();
    onTestFailed(() => console.log(`serve's warnings and errors:\n${troubleLines(operator.logs())}`));
    try {
      await apply(collaSetYaml(namespace, { replicas: 4, maxUnavailable: 1 }));
      await apply(decorationYaml(namespace, v1));
      const before = await waitSettled(namespace, 4, v1);

      const webhookUrl = await setPodWebhookUrl(`https://127.0.0.1:${await freePort()}/mutate-pods`);
      await waitForAdmission(namespace, "refused");
      await expect(createPod(namespace, { metadata: { name: "bare", labels: { app: "web" } }, spec: { containers: [{ name: "app", image: "e2e.local/app:1" }] } }))
        .rejects.toMatchObject({ code: 500 });
      // A rollout that recreates every pod, and a pod lost to the node: neither can be made good now.
      await apply(decorationYaml(namespace, withMetrics));
      const lost = before.find((pod) => pod.metadata?.labels?.[INSTANCE_ID] === "1")!;
      expect((await kubectl(["delete", "pod", "-n", namespace, lost.metadata?.name ?? "", "--wait=true"])).code).toBe(0);

      // The status says what is wrong, and no other pod was touched.
      const failure = await eventually(async () => {
        const status = (await readCollaSet(namespace)).status;
        const condition = status?.conditions?.find((entry) => entry.type === "ReplicaFailure");
        return status?.replicas === 3 && condition?.status === "True" ? condition : undefined;
      }, 30_000, "the CollaSet's status to report the failure");
      expect(failure.message).toMatch(/failed calling webhook/);
      const during = await collaSetPods(namespace);
      expect(during.map((pod) => [pod.metadata?.uid, pod.metadata?.deletionTimestamp, sidecarsOf(pod)]).sort())
        .toEqual(before.filter((pod) => pod !== lost).map((pod) => [pod.metadata?.uid, undefined, v1]).sort());

      await setPodWebhookUrl(webhookUrl);
      const restoredAt = Date.now();
      await waitForAdmission(namespace, "decorated");
      const admitted = await createPod(namespace, { metadata: { name: "bare", labels: { app: "web" } }, spec: { containers: [{ name: "app", image: "e2e.local/app:1" }] } });
      expect(admitted.spec?.containers.map((container) => container.name)).toEqual(["log-shipper", "metrics", "app"]);
      await expectConverged(namespace, { replicas: 4, sidecars: withMetrics, others: { decorated: 1, undecorated: 0 } });
      console.log(`webhook Fail: converged ${Date.now() - restoredAt} ms after the webhook URL was restored`);
    } finally {
      expect(await operator.stop()).toBe(0);
    }
  });
});
