// A decoration's native sidecar (an init container with restartPolicy Always) on the real node:
// rendered ahead of the pod's own init containers, it runs before them — the pod's init
// container reaches it over localhost, and fails the pod if it cannot — and a new image for it
// is rolled out in place: only the sidecar restarts, in the same pod.
import { describe, expect } from "vitest";
import { createKubeClient } from "../../src/kube/client.ts";
import type { Pod } from "../../src/kube/objects.ts";
import { testImage } from "../node/test-images.ts";
import { apply, proxyDecorationYaml } from "../support/collaset-world.ts";
import { kubeConfig, test } from "../support/cluster.ts";
import { startOperator } from "../support/operator.ts";
import { PodWatch } from "../support/pod-watch.ts";
import { containerView } from "../support/real-pods.ts";

function collaSetYaml(namespace: string): string {
  return `
apiVersion: apps.kusionstack.io/v1alpha1
kind: CollaSet
metadata: { name: web, namespace: ${namespace} }
spec:
  replicas: 1
  selector: { matchLabels: { app: web } }
  template:
    metadata: { labels: { app: web } }
    spec:
      terminationGracePeriodSeconds: 2
      automountServiceAccountToken: false
      initContainers:
        # Succeeds only if the proxy already serves: no retry.
        - name: check-proxy
          image: ${testImage("init")}
          command: [sh, -c, "printf 'GET /index.html HTTP/1.0\\r\\n\\r\\n' | nc -w 2 127.0.0.1 8082 | grep -q '200 OK'"]
      containers:
        - name: app
          image: ${testImage("app")}
`;
}

function decorationYaml(namespace: string, tag: "1" | "2"): string {
  return proxyDecorationYaml(namespace, { name: "mesh", part: "initContainers", tag, port: 8082, extra: ["restartPolicy: Always", "startupProbe: { httpGet: { path: /index.html, port: 8082 }, periodSeconds: 1 }"] });
}

const ready = (pod: Pod | undefined) => pod?.status?.conditions?.some((condition) => condition.type === "Ready" && condition.status === "True") === true;

describe("native sidecars from a decoration, on the real node", () => {
  test("start before the pod's own init containers, and a new image restarts only the sidecar", async ({ namespace }) => {
    const operator = await startOperator({ args: ["--lifecycle-drain-delay=1s"] });
    const watch = await PodWatch.start(createKubeClient(kubeConfig()), namespace);
    try {
      await apply(decorationYaml(namespace, "1"));
      await apply(collaSetYaml(namespace));
      const before = await watch.waitFor(() => watch.pods().find(ready), 180_000, "the pod Ready");
      expect(before.spec!.initContainers!.map((container) => container.name)).toEqual(["proxy", "check-proxy"]);
      const check = before.status!.initContainerStatuses!.find((status) => status.name === "check-proxy")!;
      expect(check.state?.terminated?.exitCode).toBe(0);
      expect(check.restartCount).toBe(0);
      const proxy = containerView(before, "proxy")!;
      expect(proxy.running).toBe(true);

      await apply(decorationYaml(namespace, "2"));
      const name = before.metadata!.name!;
      const after = await watch.waitFor(() => {
        const pod = watch.get(name);
        const view = pod === undefined ? undefined : containerView(pod, "proxy");
        return view?.image === testImage("proxy", "2") && view.running && ready(pod) ? pod : undefined;
      }, 180_000, "the sidecar restarted with proxy:2 and the pod Ready");
      expect(after.metadata!.uid).toBe(before.metadata!.uid);
      expect(containerView(after, "proxy")!.containerID).not.toBe(proxy.containerID);
      expect(containerView(after, "app")).toEqual(containerView(before, "app"));
      expect(containerView(after, "check-proxy")).toEqual(containerView(before, "check-proxy"));
    } finally {
      await watch.stop();
      expect(await operator.stop()).toBe(0);
    }
  });
});
