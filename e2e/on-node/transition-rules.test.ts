// PodTransitionRule on the real node (issue 39): rules over the pods a selector picks gate their
// PodOpsLifecycle, whoever owns them. An availability budget of one across two CollaSets holds a
// decoration rollout that recreates their pods to one pod at a time, though each CollaSet alone
// would take both of its pods out at once; a webhook rule that says no holds a pod in its
// pre-check — in traffic, not updated — asking again, until it says yes.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect } from "vitest";
import { stringify } from "yaml";
import { createKubeClient } from "../../src/kube/client.ts";
import type { Pod } from "../../src/kube/objects.ts";
import { testImage } from "../node/test-images.ts";
import { apply, decorationYaml, INSTANCE_ID } from "../support/collaset-world.ts";
import { nodeCollaSet } from "../support/node-collaset.ts";
import { clients, eventually, kubeConfig, test } from "../support/cluster.ts";
import { startOperator } from "../support/operator.ts";
import { PodWatch } from "../support/pod-watch.ts";

const kusion = { group: "apps.kusionstack.io", version: "v1alpha1" };
const GATE = "pod.kusionstack.io/service-ready";

const isReady = (pod: Pod | undefined) => pod?.status?.conditions?.some((condition) => condition.type === "Ready" && condition.status === "True") === true;
const gate = (pod: Pod | undefined) => pod?.status?.conditions?.find((condition) => condition.type === GATE)?.status;
const ownerOf = (pod: Pod) => pod.metadata?.ownerReferences?.find((owner) => owner.controller === true)?.name ?? "";

function transitionRule(namespace: string, rules: unknown[]): string {
  return stringify({ apiVersion: "apps.kusionstack.io/v1alpha1", kind: "PodTransitionRule", metadata: { name: "gate", namespace }, spec: { selector: { matchLabels: { app: "web" } }, rules } });
}

async function readRule(namespace: string): Promise<{ status?: { targets?: string[]; details?: { name: string; stage?: string; passed: boolean; rejectInfo?: { ruleName?: string; reason?: string }[] }[] } }> {
  return (await clients().custom.getNamespacedCustomObject({ ...kusion, plural: "podtransitionrules", namespace, name: "gate" })) as never;
}

describe("PodTransitionRule on the real node", () => {
  test("maxUnavailableValue 1 across two CollaSets holds a decoration rollout that recreates their pods to one pod at a time", async ({ namespace }) => {
    const operator = await startOperator();
    const watch = await PodWatch.start(createKubeClient(kubeConfig()), namespace);
    try {
      // Two CollaSets of two pods each; alone, each would take both its pods out at once.
      for (const tier of ["a", "b"]) {
        const object = nodeCollaSet(namespace, { replicas: 2, spec: { selector: { matchLabels: { app: "web", tier } }, updateStrategy: { rollingUpdate: { maxUnavailable: "100%" } } } }) as { metadata: { name: string }; spec: { template: { metadata: { labels: Record<string, string> } } } };
        object.metadata.name = `web-${tier}`;
        object.spec.template.metadata.labels = { app: "web", tier };
        await apply(stringify(object));
      }
      await apply(transitionRule(namespace, [{ name: "one-at-a-time", availablePolicy: { maxUnavailableValue: 1 } }]));
      const slotsOf = () => new Map(["web-a", "web-b"].flatMap((owner) => ["0", "1"].map((id) => [`${owner}/${id}`, watch.pods().filter((pod) => ownerOf(pod) === owner && pod.metadata?.labels?.[INSTANCE_ID] === id)] as const)));
      const available = (pods: readonly Pod[]) => pods.some((pod) => pod.metadata?.deletionTimestamp == null && isReady(pod) && gate(pod) === "True");
      await watch.waitFor(() => ([...slotsOf().values()].every(available) ? true : undefined), 180_000, "four pods in service");
      await eventually(async () => ((await readRule(namespace)).status?.targets?.length === 4 ? true : undefined), 60_000, "the rule's four targets");

      // A sidecar for every app: web pod: a change that recreates each of them.
      let worst = 0;
      const stop = watch.onPod(() => {
        worst = Math.max(worst, [...slotsOf().values()].filter((pods) => !available(pods)).length);
      });
      await apply(decorationYaml(namespace, [`logger=${testImage("logger")}`]));
      await watch.waitFor(() => {
        const live = watch.pods().filter((pod) => pod.metadata?.deletionTimestamp == null);
        return live.length === 4 && live.every((pod) => isReady(pod) && gate(pod) === "True" && pod.spec?.containers.some((container) => container.name === "logger")) ? true : undefined;
      }, 300_000, "all four pods recreated with the sidecar, in service");
      stop();
      // One slot at a time out of service, across both CollaSets.
      expect(worst).toBe(1);
    } finally {
      await watch.stop();
      expect(await operator.stop()).toBe(0);
    }
  });

  test("a webhook rule that says no holds a pod in its pre-check, in traffic and not updated, asking again, until it says yes", async ({ namespace }) => {
    let answer: "no" | "yes" = "no";
    const requests: { traceId?: string; ruleName?: string; resources?: { name: string; parameters?: Record<string, string> }[] }[] = [];
    const server: Server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on("data", (chunk: Buffer) => chunks.push(chunk));
      request.on("end", () => {
        requests.push(JSON.parse(Buffer.concat(chunks).toString("utf8")) as never);
        response.setHeader("content-type", "application/json");
        response.end(JSON.stringify(answer === "yes" ? { success: true, message: "go ahead" } : { success: false, message: "not now" }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/check`;
    const operator = await startOperator();
    const watch = await PodWatch.start(createKubeClient(kubeConfig()), namespace);
    try {
      const collaSet = (image: string) => apply(stringify(nodeCollaSet(namespace, { replicas: 1, image })));
      await collaSet(testImage("app"));
      const pod = await watch.waitFor(() => watch.pods().find((item) => isReady(item) && gate(item) === "True"), 120_000, "the pod in service");
      const name = pod.metadata!.name!;
      await apply(transitionRule(namespace, [{ name: "ask", webhook: { clientConfig: { url }, parameters: [{ key: "ip", valueFrom: { fieldRef: { fieldPath: "status.podIP" } } }] } }]));
      await eventually(async () => ((await readRule(namespace)).status?.targets?.includes(name) === true ? true : undefined), 60_000, "the rule's target");

      await collaSet(testImage("app", "2"));
      // Asked, refused, asked again 5 s later: the pod waits in its pre-check, still serving.
      await eventually(() => Promise.resolve(requests.length >= 2 ? true : undefined), 60_000, "the webhook asked twice");
      // While a call is in flight the pod's detail says it waits for the answer; the refusal follows.
      const refused = (current: Pod | undefined) => (JSON.parse(current?.metadata?.annotations?.["detail.podtransitionrule.kusionstack.io/gate"] ?? "{}") as { rejectInfo?: { reason?: string }[] }).rejectInfo?.[0]?.reason?.includes("msg: not now") === true;
      const held = await watch.waitFor(() => (refused(watch.get(name)) ? watch.get(name) : undefined), 30_000, "the refusal recorded on the pod");
      expect(held.metadata?.labels?.["pre-check.podopslifecycle.kusionstack.io/collaset"]).toBeDefined();
      expect(held.metadata?.labels?.["pre-checked.podopslifecycle.kusionstack.io/collaset"]).toBeUndefined();
      expect(gate(held)).toBe("True");
      expect(isReady(held)).toBe(true);
      expect(held.spec?.containers[0]?.image).toBe(testImage("app"));
      expect(JSON.parse(held.metadata?.annotations?.["detail.podtransitionrule.kusionstack.io/gate"] ?? "{}")).toMatchObject({ stage: "PreCheck", passed: false, rejectInfo: [{ ruleName: "ask", reason: expect.stringContaining("msg: not now") as unknown }] });
      expect(requests[0]).toMatchObject({ ruleName: "ask", resources: [{ name, parameters: { ip: held.status?.podIP } }] });
      const detail = (await readRule(namespace)).status?.details?.find((item) => item.name === name);
      expect(detail).toMatchObject({ stage: "PreCheck", passed: false });

      answer = "yes";
      await watch.waitFor(() => {
        const current = watch.get(name);
        return current?.spec?.containers[0]?.image === testImage("app", "2") && isReady(current) && gate(current) === "True" && current.metadata?.labels?.["operating.podopslifecycle.kusionstack.io/collaset"] === undefined ? true : undefined;
      }, 120_000, "the pod updated and back in service");
    } finally {
      await watch.stop();
      expect(await operator.stop()).toBe(0);
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
