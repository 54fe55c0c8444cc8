// Issue 30: a rollout is under way when the controller's kube-apiserver goes down; while it is
// down the decoration is deleted (through another API server on the same etcd, as in an HA
// control plane; an edit would be refused, as our webhook cannot reach its API server then).
// The controller's decoration caches outlive its leadership and, after an outage, wait out a
// watch backoff of several seconds before catching up, while the leader it wins back lists its
// pods at once. A leader acting on them rendered the pods it replaced from the decoration as it
// was, and moved each of them again once the cache caught up.
import { describe, expect } from "vitest";
import { createKubeClient } from "../src/kube/client.ts";
import type { Pod } from "../src/kube/objects.ts";
import { useControllerApiServer } from "./support/controller-api-server.ts";
import { kubeConfig, kubectl, test } from "./support/cluster.ts";
import { apply, collaSetYaml, decorationYaml, isCollaSetPod, sidecarsOf, waitSettled } from "./support/collaset-world.ts";
import { startOperator, troubleLines } from "./support/operator.ts";
import { PodWatch } from "./support/pod-watch.ts";

const REPLICAS = 10;
const v1 = ["log-shipper=e2e.local/sidecar:1"];
const v2 = ["log-shipper=e2e.local/sidecar:1", "metrics=e2e.local/logger:1"];

const controller = useControllerApiServer();

describe("a decoration deleted while the controller's kube-apiserver is down", () => {
  test("the leader that comes back creates every pod without it, none from the decoration as it was before the outage", async ({ namespace, onTestFailed }) => {
    const operator = await startOperator({ kubeconfig: controller.kubeconfig, args: ["--leader-elect", `--leader-election-id=${namespace}`] });
    onTestFailed(() => console.log(`serve's warnings and errors:\n${troubleLines(operator.logs())}`));
    const watch = await PodWatch.start(createKubeClient(kubeConfig()), namespace);
    try {
      await apply(collaSetYaml(namespace, { replicas: REPLICAS, maxUnavailable: 2 }));
      await apply(decorationYaml(namespace, v1));
      await waitSettled(namespace, REPLICAS, v1);

      // A rollout that recreates every pod, two at a time; the API server dies in its middle.
      await apply(decorationYaml(namespace, v2));
      await watch.waitFor(() => (watch.pods().filter(isCollaSetPod).some((pod) => pod.metadata?.deletionTimestamp != null || sidecarsOf(pod).length === 2) ? true : undefined), 60_000, "the rollout to start");
      await controller.api.kill();
      await operator.waitForLog('"msg":"stopped leading"', 60_000);
      // Its finalizer holds it until its pods are clean: the new leader has to take the sidecars out.
      const deleted = await kubectl(["delete", "poddecoration", "logging", "-n", namespace, "--wait=false"]);
      expect(deleted.stderr).toBe("");

      // What each pod is created with: the first sight of a uid not seen before the restart.
      const before = new Set(watch.pods().map((pod) => pod.metadata?.uid ?? ""));
      const created = new Map<string, Pod>();
      const remove = watch.onPod((pod) => {
        const uid = pod.metadata?.uid ?? "";
        if (isCollaSetPod(pod) && !before.has(uid) && !created.has(uid)) created.set(uid, pod);
      });
      await controller.api.start();
      await waitSettled(namespace, REPLICAS, []);
      remove();

      const madeBefore = [...created.values()].filter((pod) => sidecarsOf(pod).length > 0).map((pod) => `${pod.metadata?.name ?? ""}: ${sidecarsOf(pod).join(",")}`);
      expect(created.size).toBeGreaterThan(0);
      expect(madeBefore).toEqual([]);
    } finally {
      await watch.stop();
      expect(await operator.stop()).toBe(0);
    }
  });
});
