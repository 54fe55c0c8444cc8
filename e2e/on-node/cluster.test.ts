// The one-node cluster itself: pods run in real containers on the node, reach the API server
// through the `kubernetes` Service (kube-proxy), and get a Ready condition from real probes.
import { describe, expect, inject } from "vitest";
import { clients, eventually, kubectl, test } from "../support/cluster.ts";
import { containerView, podReaches } from "../support/real-pods.ts";
import { testImage } from "../node/test-images.ts";

describe("the real node", () => {
  test("runs a Deployment's pod in a containerd container, Ready by its HTTP probe", async ({ namespace }) => {
    await clients().apps.createNamespacedDeployment({ namespace, body: {
      metadata: { name: "web" },
      spec: {
        replicas: 1,
        selector: { matchLabels: { app: "web" } },
        template: {
          metadata: { labels: { app: "web" } },
          spec: { containers: [{ name: "app", image: testImage("app"), command: ["httpd", "-f", "-p", "8080", "-h", "/www"], readinessProbe: { httpGet: { path: "/index.html", port: 8080 }, periodSeconds: 1 } }] },
        },
      },
    } });
    const pod = await podReaches(namespace, await onlyPodName(namespace), (current) => (current.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") ? current : undefined), "Ready");
    expect(pod.spec!.nodeName).toBe(inject("nodeName"));
    expect(pod.status!.podIP).toMatch(/^10\.88\./);
    const app = containerView(pod, "app")!;
    expect(app.containerID).toMatch(/^containerd:\/\/[0-9a-f]{64}$/);
    expect(app.imageID).toMatch(/^sha256:[0-9a-f]{64}$/);
    // The image's own file, read inside the container.
    const reference = await kubectl(["exec", "-n", namespace, pod.metadata!.name!, "--", "cat", "/etc/image-reference"]);
    expect(reference.stdout.trim()).toBe(testImage("app"));
  });

  test("lets a pod reach the API server through the kubernetes Service", async ({ namespace }) => {
    await clients().core.createNamespacedPod({ namespace, body: { metadata: { name: "client" }, spec: { containers: [{ name: "client", image: testImage("app") }] } } });
    await podReaches(namespace, "client", (current) => (containerView(current, "client")?.running === true ? true : undefined), "running");
    const service = await clients().core.readNamespacedService({ namespace: "default", name: "kubernetes" });
    const connect = await kubectl(["exec", "-n", namespace, "client", "--", "sh", "-c", `echo | nc -w 3 ${service.spec!.clusterIP} 443 && echo connected`]);
    expect(connect.stdout.trim()).toBe("connected");
  });
});

function onlyPodName(namespace: string): Promise<string> {
  return eventually(async () => {
    const list = await clients().core.listNamespacedPod({ namespace });
    return list.items.length === 1 ? list.items[0]!.metadata!.name! : undefined;
  }, 30_000, "the Deployment's pod");
}
