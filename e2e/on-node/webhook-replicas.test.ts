// The pod webhook's memory of recent answers against the API server of the real node's cluster,
// which runs the ServiceAccount admission plugin: replicas of one template reach the webhook with
// managed fields and a token volume of their own, and are still answered from memory, each with
// its own volume. Server-side dry runs: admission in full, nothing scheduled.
import type { V1Pod } from "@kubernetes/client-node";
import { describe, expect } from "vitest";
import { testImage } from "../node/test-images.ts";
import { apply } from "../support/collaset-world.ts";
import { clients, eventually, test } from "../support/cluster.ts";
import { startOperator, type Operator } from "../support/operator.ts";
import { queueIdle } from "../support/queue-metrics.ts";

const SIDECAR = "log-shipper";

function decorationYaml(namespace: string): string {
  return `
apiVersion: apps.kusionstack.io/v1alpha1
kind: PodDecoration
metadata: { name: logging, namespace: ${namespace} }
spec:
  selector: { matchLabels: { app: web } }
  template:
    containers:
      - { name: ${SIDECAR}, image: ${testImage("logger")}, injectPolicy: AfterPrimaryContainer }
    primaryContainers:
      - targetPolicy: All
        env: [{ name: LOG_DIR, value: /var/log/app }]
`;
}

async function rememberedAnswers(operator: Operator): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${operator.metricsPort}/metrics`)).text();
  const line = text.split("\n").find((candidate) => candidate.startsWith('pod_decorator_webhook_remembered_answers_total{webhook="mutate-pods"}'));
  return line === undefined ? 0 : Number(line.slice(line.lastIndexOf(" ") + 1));
}

const names = (containers: { name: string }[] | undefined) => (containers ?? []).map((container) => container.name);

describe("the pod webhook's memory, with the API server's ServiceAccount admission", () => {
  test("answers a template's replicas from memory, each with its own token volume, as rendering would", async ({ namespace }) => {
    const operator = await startOperator();
    try {
      await apply(decorationYaml(namespace));
      const { core } = clients();
      const body = {
        metadata: { generateName: "web-5c8f7d-", labels: { app: "web", "pod-template-hash": "5c8f7d" } },
        spec: { containers: [{ name: "app", image: testImage("app") }, { name: "metrics", image: testImage("app") }] },
      };
      const create = () => core.createNamespacedPod({ namespace, body, dryRun: "All" });
      // The namespace's default ServiceAccount (the controller manager makes it) and the decoration in serve's cache.
      await eventually(async () => (names((await create()).spec?.containers).includes(SIDECAR) ? true : undefined), 60_000, "a decorated dry-run pod");
      // The controller has written the decoration's status: the cached object stays the same from here.
      await queueIdle(operator.metricsPort, "poddecoration");
      await create();

      const before = await rememberedAnswers(operator);
      const replicas: V1Pod[] = [];
      for (let index = 0; index < 4; index++) replicas.push(await create());
      const tokenVolumes = replicas.map((pod) => pod.spec?.volumes?.find((volume) => volume.name.startsWith("kube-api-access-"))?.name);
      // The premise: every replica came with a token volume of its own.
      expect(tokenVolumes.every((name) => name !== undefined)).toBe(true);
      expect(new Set(tokenVolumes).size).toBe(4);
      const order = names(replicas[0]!.spec?.containers);
      expect([...order].sort()).toEqual(["app", SIDECAR, "metrics"].sort());
      for (const [index, pod] of replicas.entries()) {
        expect(names(pod.spec?.containers)).toEqual(order);
        for (const container of pod.spec!.containers.filter((candidate) => candidate.name !== SIDECAR)) {
          expect(container.env?.find((variable) => variable.name === "LOG_DIR")?.value).toBe("/var/log/app");
          expect(container.volumeMounts?.map((mount) => mount.name)).toEqual([tokenVolumes[index]]);
        }
      }
      // Every replica after the warm-up pod was answered from memory.
      expect(await rememberedAnswers(operator) - before).toBe(4);
    } finally {
      expect(await operator.stop()).toBe(0);
    }
  });
});
