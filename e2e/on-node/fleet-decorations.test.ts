// Issue 38's story on the real node: one ClusterPodDecoration, the platform's mesh proxy, selects
// the namespaces labelled `mesh: enabled`. Three such namespaces — a CollaSet's, a Deployment's
// (the staging one) and a bare pod's — get the proxy at creation, running; a fourth namespace
// labelled afterwards gets it for its new pods; a new proxy image rolls out as a namespace canary,
// staging first and checked there (in place, the same pod) while the rest is held, then, the canary
// lifted, to the CollaSet's pods in place through PodOpsLifecycle with a client sending requests
// the whole time: none fails. A namespace admin can neither delete it, nor out-rank it with a
// PodDecoration of their own, nor create a pod that skips it.
import type { V1Pod } from "@kubernetes/client-node";
import { describe, expect } from "vitest";
import { testImage } from "../node/test-images.ts";
import { apply } from "../support/collaset-world.ts";
import { clients, eventually, kubectl, test } from "../support/cluster.ts";
import { deploymentYaml } from "../support/deployment-world.ts";
import { namespaceAdminIdentity } from "../support/identities.ts";
import { applyNodeCollaSet } from "../support/node-collaset.ts";
import { startOperator } from "../support/operator.ts";
import { containerView, isPodReady } from "../support/real-pods.ts";
import { expectOutOfTrafficAroundEachRestart, reportFigures, rolloutUnderTraffic } from "../support/traffic.ts";

const REPLICAS = 3;
const NAME = "mesh";
const CLUSTER_REVISIONS = "pod-decorator.io/cluster-revisions";

/** The platform's proxy for `app: web` pods of every namespace labelled mesh=enabled; `canary` limits the rollout to namespaces with that stage. */
function meshYaml(tag: "1" | "2", canary?: string): string {
  return `
apiVersion: pod-decorator.io/v1alpha1
kind: ClusterPodDecoration
metadata: { name: ${NAME} }
spec:
  namespaceSelector: { matchLabels: { mesh: enabled } }
  selector: { matchLabels: { app: web } }
  injectStrategy: { group: mesh, weight: 100 }
${canary === undefined ? "" : `  updateStrategy: { rollingUpdate: { namespaceSelector: { matchLabels: { stage: ${canary} } } } }\n`}  template:
    containers:
      - name: proxy
        image: ${testImage("proxy", tag)}
        command: [httpd, -f, -p, "8081", -h, /www]
        readinessProbe: { httpGet: { path: /index.html, port: 8081 }, periodSeconds: 1, failureThreshold: 1 }
`;
}

function barePod(name: string): V1Pod {
  return { metadata: { name, labels: { app: "web" } }, spec: { terminationGracePeriodSeconds: 2, automountServiceAccountToken: false, containers: [{ name: "app", image: testImage("app") }] } };
}

/** The pod's proxy runs `image`, started and ready, as the kubelet reports it. */
function runsProxy(pod: V1Pod, image: string): boolean {
  const proxy = containerView(pod, "proxy");
  return proxy?.image === image && proxy.running && proxy.ready;
}

async function pods(namespace: string): Promise<V1Pod[]> {
  return (await clients().core.listNamespacedPod({ namespace, labelSelector: "app=web" })).items.filter((pod) => pod.metadata?.deletionTimestamp == null);
}

/** Waits until every `app: web` pod of the namespace (at least `count`) is Ready and runs `image` as its proxy; returns them. */
function proxiesRun(namespace: string, count: number, image: string, what: string): Promise<V1Pod[]> {
  return eventually(async () => {
    const list = await pods(namespace);
    return list.length >= count && list.every((pod) => isPodReady(pod) && runsProxy(pod, image)) ? list : undefined;
  }, 180_000, what);
}

async function createNamespace(name: string, labels: Record<string, string>): Promise<void> {
  await clients().core.createNamespace({ body: { metadata: { name, labels } } });
}

describe("a fleet-wide mesh proxy on the real node", () => {
  test("reaches every namespace labelled in, rolls out staging first, moves the CollaSet without a failed request, and the namespaces cannot shed it", async ({ namespace }) => {
    const staging = `${namespace}-staging`.slice(0, 63);
    const bare = `${namespace}-bare`.slice(0, 63);
    const later = `${namespace}-later`.slice(0, 63);
    const operator = await startOperator({ args: ["--lifecycle-drain-delay=2s"] });
    try {
      await kubectl(["label", "namespace", namespace, "mesh=enabled", "stage=production"]);
      await createNamespace(staging, { mesh: "enabled", stage: "staging" });
      await createNamespace(bare, { mesh: "enabled", stage: "production" });
      await createNamespace(later, { stage: "production" });

      const figures = await rolloutUnderTraffic(namespace, REPLICAS, async () => {
        await applyNodeCollaSet(namespace, { replicas: REPLICAS });
        await apply(deploymentYaml(staging, { replicas: 1 }));
        await clients().core.createNamespacedPod({ namespace: bare, body: barePod("bare-0") });
      }, {
        sidecar: (tag) => meshYaml(tag),
        beforeRollout: async () => {
          // At creation, in all three namespaces, running.
          const collaSetPods = await proxiesRun(namespace, REPLICAS, testImage("proxy", "1"), "the CollaSet's pods with proxy:1");
          await proxiesRun(staging, 1, testImage("proxy", "1"), "the Deployment's pod with proxy:1");
          await proxiesRun(bare, 1, testImage("proxy", "1"), "the bare pod with proxy:1");

          // A fourth namespace: nothing before its label, the proxy for pods created after.
          const before = await clients().core.createNamespacedPod({ namespace: later, body: barePod("before") });
          expect(before.spec!.containers.map((container) => container.name)).toEqual(["app"]);
          await kubectl(["label", "namespace", later, "mesh=enabled"]);
          await eventually(async () => {
            const probe = await clients().core.createNamespacedPod({ namespace: later, dryRun: "All", body: barePod("probe") });
            return probe.spec!.containers.some((container) => container.name === "proxy") ? true : undefined;
          }, 30_000, "the webhook to see the fourth namespace labelled");
          await clients().core.createNamespacedPod({ namespace: later, body: barePod("after") });
          await eventually(async () => {
            const after = (await pods(later)).find((pod) => pod.metadata?.name === "after");
            return after !== undefined && isPodReady(after) && runsProxy(after, testImage("proxy", "1")) ? true : undefined;
          }, 180_000, "the fourth namespace's new pod with proxy:1");

          // The namespace canary: proxy:2 to staging only, in place; checked before the rest moves.
          const stagingPod = (await pods(staging))[0]!;
          await apply(meshYaml("2", "staging"));
          const [moved] = await proxiesRun(staging, 1, testImage("proxy", "2"), "staging's pod on proxy:2");
          expect(moved!.metadata!.uid).toBe(stagingPod.metadata!.uid);
          const status = await eventually(async () => {
            const cpd = (await clients().custom.getClusterCustomObject({ group: "pod-decorator.io", version: "v1alpha1", plural: "clusterpoddecorations", name: NAME })) as { status?: { namespaces?: { name: string; matchedPods: number; updatedPods: number }[] } };
            const byName = new Map((cpd.status?.namespaces ?? []).map((entry) => [entry.name, entry]));
            return byName.get(staging)?.updatedPods === 1 && byName.get(namespace)?.matchedPods === REPLICAS ? byName : undefined;
          }, 60_000, "the canary counted per namespace");
          expect(status.get(namespace)).toEqual({ name: namespace, matchedPods: REPLICAS, updatedPods: 0 });
          for (const pod of await pods(namespace)) expect(containerView(pod, "proxy")?.image).toBe(testImage("proxy", "1"));
          expect((await pods(namespace)).map((pod) => pod.metadata!.uid).sort()).toEqual(collaSetPods.map((pod) => pod.metadata!.uid).sort());
          expect(containerView((await pods(bare))[0]!, "proxy")?.image).toBe(testImage("proxy", "1"));

          // What the bare namespace's admin cannot do to it.
          const admin = await namespaceAdminIdentity(bare, "team-admin", [{ apiGroups: ["apps.kusionstack.io"], resources: ["poddecorations"], verbs: ["*"] }]);
          const deleted = await kubectl(["delete", `--kubeconfig=${admin.kubeconfigPath}`, "clusterpoddecorations.pod-decorator.io", NAME]);
          expect(deleted.code).not.toBe(0);
          expect(deleted.stderr).toContain("forbidden");
          const outRanking = await kubectl(["create", `--kubeconfig=${admin.kubeconfigPath}`, "-f", "-"], JSON.stringify({
            apiVersion: "apps.kusionstack.io/v1alpha1", kind: "PodDecoration", metadata: { name: "my-proxy", namespace: bare },
            spec: { selector: {}, injectStrategy: { group: "mesh", weight: 1000 }, template: { containers: [{ name: "proxy", image: testImage("proxy", "1") }] } },
          }));
          expect(outRanking.code).not.toBe(0);
          expect(outRanking.stderr).toContain(`may not update ClusterPodDecoration/${NAME}`);
          const skipping = await admin.core.createNamespacedPod({
            namespace: bare,
            body: { ...barePod("skipping"), metadata: { name: "skipping", labels: { app: "web" }, annotations: { [CLUSTER_REVISIONS]: JSON.stringify([{ name: NAME, revision: "cpd-mesh-forged" }]), "sidecar.istio.io/inject": "false" } } },
          });
          expect(skipping.spec!.containers.map((container) => container.name)).toContain("proxy");
          expect(JSON.parse(skipping.metadata!.annotations![CLUSTER_REVISIONS]!)).not.toContainEqual({ name: NAME, revision: "cpd-mesh-forged" });
        },
      });
      reportFigures("fleet-decorations", "namespace canary lifted, CollaSet with PodOpsLifecycle", REPLICAS, figures);
      expectOutOfTrafficAroundEachRestart(figures, REPLICAS);

      // The rest of the fleet moved too: the bare pods and the fourth namespace's, in place.
      await proxiesRun(bare, 2, testImage("proxy", "2"), "the bare namespace's pods on proxy:2");
      const laterPods = await eventually(async () => {
        const list = await pods(later);
        const after = list.find((pod) => pod.metadata?.name === "after");
        return after !== undefined && runsProxy(after, testImage("proxy", "2")) ? list : undefined;
      }, 180_000, "the fourth namespace's decorated pod on proxy:2");
      // The pod created before its namespace was labelled in still has no proxy (adding one needs its recreation).
      expect(laterPods.find((pod) => pod.metadata?.name === "before")!.spec!.containers.map((container) => container.name)).toEqual(["app"]);
    } finally {
      await kubectl(["delete", "clusterpoddecorations.pod-decorator.io", NAME, "--ignore-not-found", "--wait=false"]);
      await kubectl(["delete", "namespace", staging, bare, later, "--wait=false"]);
      expect(await operator.stop()).toBe(0);
    }
  });
});
