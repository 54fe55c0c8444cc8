// The chart installed by Helm on the real node, from the image `make image` built: its pods
// start under the chart's securityContext, the API server calls the webhook through the
// chart's Service, pods created afterwards run their injected sidecar, and a PodDecoration image
// change reaches CollaSet pods in place — seen in the kubelet's own container statuses.
import type { V1Pod } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, inject } from "vitest";
import { isNotFound } from "../../src/kube/errors.ts";
import { chartDir, helm } from "../helm/helm.ts";
import { testImage } from "../node/test-images.ts";
import { apply } from "../support/collaset-world.ts";
import { clients, eventually, kubectl, test } from "../support/cluster.ts";
import { containerView, isPodReady, type ContainerView } from "../support/real-pods.ts";

const RELEASE = "pod-decorator";
const RELEASE_NAMESPACE = "pod-decorator-system";
const kusion = { group: "apps.kusionstack.io", version: "v1alpha1" };

function helmOk(args: readonly string[]): string {
  const result = helm([...args, "--kubeconfig", inject("kubeconfig")]);
  if (result.code !== 0) throw new Error(`helm ${args.join(" ")} failed (exit ${result.code}):\n${result.stderr}`);
  return result.stdout;
}

beforeAll(() => {
  // Default values: two replicas of pod-decorator:<appVersion>, self-signed certificates.
  helmOk(["install", RELEASE, chartDir, "--namespace", RELEASE_NAMESPACE, "--create-namespace", "--wait", "--timeout", "3m"]);
});

afterAll(async () => {
  helmOk(["uninstall", RELEASE, "--namespace", RELEASE_NAMESPACE, "--wait", "--timeout", "2m"]);
  await clients().core.deleteNamespace({ name: RELEASE_NAMESPACE });
  // Gone before the next file starts: serve's namespace is the same one.
  await eventually(() => clients().core.readNamespace({ name: RELEASE_NAMESPACE }).then(() => undefined, (error: unknown) => (isNotFound(error) ? true : undefined)), 120_000, `namespace ${RELEASE_NAMESPACE} to be deleted`);
});

async function podsOf(namespace: string, labelSelector: string): Promise<V1Pod[]> {
  return (await clients().core.listNamespacedPod({ namespace, labelSelector })).items;
}

function decoration(namespace: string, image: string): string {
  return `
apiVersion: apps.kusionstack.io/v1alpha1
kind: PodDecoration
metadata:
  name: logging
  namespace: ${namespace}
spec:
  selector:
    matchLabels:
      tier: web
  updateStrategy:
    rollingUpdate:
      partition: 0
  template:
    containers:
      - name: log-shipper
        image: ${image}
`;
}

/** Until the webhook's cache knows the decoration, a pod would be created without it. */
async function webhookDecorates(namespace: string, sidecarImage: string): Promise<void> {
  await eventually(async () => {
    const created = await clients().core.createNamespacedPod({
      namespace,
      dryRun: "All",
      body: { metadata: { generateName: "probe-", labels: { tier: "web" } }, spec: { containers: [{ name: "app", image: testImage("app") }] } },
    });
    return created.spec?.containers.some((container) => container.image === sidecarImage) === true ? true : undefined;
  }, 60_000, "the webhook to inject the decoration");
}

/** Deletes the decoration while the controller runs to release its finalizer. */
async function removeDecoration(namespace: string): Promise<void> {
  await kubectl(["delete", "pd", "logging", "-n", namespace, "--wait=true", "--timeout=60s"]);
}

describe("the chart on a real node", () => {
  test("runs two replicas under its securityContext, Ready, serving the webhook through its Service", async () => {
    const pods = await podsOf(RELEASE_NAMESPACE, `app.kubernetes.io/instance=${RELEASE}`);
    expect(pods).toHaveLength(2);
    for (const pod of pods) {
      expect(isPodReady(pod)).toBe(true);
      const status = pod.status!.containerStatuses![0]!;
      expect(status.image).toBe("docker.io/library/pod-decorator:0.1.0");
      expect(status.containerID).toMatch(/^containerd:\/\//);
      // The kubelet reports the identity the process really runs as.
      expect(status.user?.linux).toMatchObject({ uid: 65532, gid: 65532 });
      expect(pod.spec!.containers[0]!.securityContext).toMatchObject({ readOnlyRootFilesystem: true, allowPrivilegeEscalation: false, capabilities: { drop: ["ALL"] } });
    }

    // The Service's endpoints become the two pods (the EndpointSlice controller follows readiness
    // a moment later); the API server calls the webhook through it.
    const podIPs = pods.map((pod) => pod.status!.podIP!).sort();
    let addresses: string[] = [];
    await eventually(async () => {
      const slices = await clients().objects.list("discovery.k8s.io/v1", "EndpointSlice", RELEASE_NAMESPACE);
      addresses = (slices.items as { endpoints?: { addresses: string[]; conditions?: { ready?: boolean } }[] }[])
        .flatMap((slice) => slice.endpoints ?? []).filter((endpoint) => endpoint.conditions?.ready === true).flatMap((endpoint) => endpoint.addresses).sort();
      return JSON.stringify(addresses) === JSON.stringify(podIPs) ? true : undefined;
    }, 30_000, "the Service's ready endpoints to be the two pods").catch(() => undefined);
    expect(addresses).toEqual(podIPs);
    const configuration = await clients().admission.readValidatingWebhookConfiguration({ name: RELEASE });
    for (const webhook of configuration.webhooks ?? []) {
      expect(webhook.clientConfig.service).toMatchObject({ name: RELEASE, namespace: RELEASE_NAMESPACE });
      expect(webhook.clientConfig.caBundle?.length ?? 0).toBeGreaterThan(0);
    }
  });

  test("refuses an invalid PodDecoration with the field path, through the Service", async ({ namespace }) => {
    const result = await kubectl(["apply", "-f", "-"], `
apiVersion: apps.kusionstack.io/v1alpha1
kind: PodDecoration
metadata:
  name: bad
  namespace: ${namespace}
spec:
  selector: {}
  template:
    primaryContainers:
      - targetPolicy: ByName
        image: ${testImage("app", "2")}
`);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain("denied the request");
    expect(result.stderr).toContain("spec.template.primaryContainers[0].name: Required value");
  });

  test("injects the sidecar into a Deployment's pods created afterwards, and the kubelet runs it", async ({ namespace }) => {
    await apply(decoration(namespace, testImage("sidecar")));
    await webhookDecorates(namespace, testImage("sidecar"));
    await clients().apps.createNamespacedDeployment({ namespace, body: {
      metadata: { name: "shop" },
      spec: {
        replicas: 2,
        selector: { matchLabels: { app: "shop" } },
        template: { metadata: { labels: { app: "shop", tier: "web" } }, spec: { terminationGracePeriodSeconds: 5, containers: [{ name: "app", image: testImage("app") }] } },
      },
    } });
    const pods = await eventually(async () => {
      const list = await podsOf(namespace, "app=shop");
      return list.length === 2 && list.every(isPodReady) ? list : undefined;
    }, 90_000, "two Ready pods of the Deployment");
    for (const pod of pods) {
      expect(pod.spec!.containers.map((container) => container.name)).toEqual(["log-shipper", "app"]);
      expect(containerView(pod, "log-shipper")).toMatchObject({ image: testImage("sidecar"), running: true, restartCount: 0 });
    }
    await removeDecoration(namespace);
  });

  test("rolls a decoration's new image out to a CollaSet in place: only the sidecar restarts", async ({ namespace }) => {
    await apply(decoration(namespace, testImage("sidecar")));
    await apply(`
apiVersion: apps.kusionstack.io/v1alpha1
kind: CollaSet
metadata:
  name: web
  namespace: ${namespace}
spec:
  replicas: 2
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      labels:
        app: web
        tier: web
    spec:
      terminationGracePeriodSeconds: 5
      containers:
        - name: app
          image: ${testImage("app")}
`);
    const ready = (image: string) => eventually(async () => {
      const list = await podsOf(namespace, "app=web");
      const done = list.length === 2 && list.every((pod) => isPodReady(pod) && containerView(pod, "log-shipper")?.image === image && containerView(pod, "log-shipper")?.running === true);
      return done ? new Map(list.map((pod) => [pod.metadata!.uid!, pod])) : undefined;
    }, 120_000, `two Ready CollaSet pods running ${image}`);
    const before = await ready(testImage("sidecar"));

    await apply(decoration(namespace, testImage("sidecar", "2")));
    const after = await ready(testImage("sidecar", "2"));
    expect([...after.keys()].sort()).toEqual([...before.keys()].sort());
    for (const [uid, pod] of after) {
      const previous = before.get(uid)!;
      const sidecar = containerView(pod, "log-shipper")!;
      const oldSidecar: ContainerView = containerView(previous, "log-shipper")!;
      expect(sidecar.restartCount).toBe(oldSidecar.restartCount + 1);
      expect(sidecar.imageID).not.toBe(oldSidecar.imageID);
      expect(containerView(pod, "app")).toEqual(containerView(previous, "app"));
    }
    // The controller writes status after it has seen the pods settle: poll for it.
    await eventually(async () => {
      const object = (await clients().custom.getNamespacedCustomObject({ ...kusion, plural: "collasets", namespace, name: "web" })) as { status?: { updatedReplicas?: number; availableReplicas?: number } };
      return object.status?.updatedReplicas === 2 && object.status.availableReplicas === 2 ? true : undefined;
    }, 30_000, "the CollaSet to report two updated, available replicas");
    await removeDecoration(namespace);
  });
});
