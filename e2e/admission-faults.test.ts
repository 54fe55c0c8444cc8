// Issue 13: admission under faults, on the real control plane (written to hold on a real node
// too: nothing here depends on the simulated kubelet but CollaSet pods becoming ready). The
// webhook black-holed (connections accepted, never answered) under Ignore and under Fail; every
// replica down while pods are created, then back; a caBundle removed; the CA Secret deleted,
// made unusable and rotated. Nothing that should be admitted is refused, nothing is lost, and
// deleting a PodDecoration never waits for our own webhooks.
import { afterAll, beforeAll, describe, expect } from "vitest";
import { createCertificateAuthority } from "../src/webhook/certificates.ts";
import { caSecret } from "../src/webhook/shared-ca.ts";
import { applyWebhookConfigurations } from "../src/webhook/webhook-configuration.ts";
import { createKubeClient } from "../src/kube/client.ts";
import { clients, eventually, kubeConfig, kubectl, test } from "./support/cluster.ts";
import { apply, collaSetYaml, decorationYaml, expectConverged, INSTANCE_ID, readCollaSet, REVISIONS, TEMPLATE_REVISION, waitSettled } from "./support/collaset-world.ts";
import { startKubelet, type Kubelet } from "./support/kubelet.ts";
import { freePort, startOperator, troubleLines, type Operator } from "./support/operator.ts";
import { admissionOf, blackHole, redirectWebhooks, waitForAdmission } from "./support/webhook-routes.ts";

const v1 = ["log-shipper=e2e.local/sidecar:1"];
const WEB = { app: "web" };
const PROTECTION = "poddecoration.kusionstack.io/protection";
const kusion = { group: "apps.kusionstack.io", version: "v1alpha1", plural: "poddecorations" };

let kubelet: Kubelet;
beforeAll(async () => {
  kubelet = await startKubelet();
});
afterAll(async () => {
  await kubelet.stop();
});

function barePod(name: string) {
  return { metadata: { name, labels: WEB }, spec: { containers: [{ name: "app", image: "e2e.local/app:1" }] } };
}

function containerNames(pod: { spec?: { containers: { name: string }[] } }): string[] {
  return (pod.spec?.containers ?? []).map((container) => container.name);
}

/** A PodDecoration that selects nothing, held by the controller's finalizer. */
async function protectedDecoration(namespace: string): Promise<void> {
  await apply(`
apiVersion: apps.kusionstack.io/v1alpha1
kind: PodDecoration
metadata:
  name: doomed
  namespace: ${namespace}
spec:
  selector:
    matchLabels:
      app: nothing
  template:
    metadata:
      - labels:
          doomed: "true"
`);
  await eventually(async () => {
    const pd = (await clients().custom.getNamespacedCustomObject({ ...kusion, namespace, name: "doomed" })) as { metadata: { finalizers?: string[] } };
    return pd.metadata.finalizers?.includes(PROTECTION) === true ? true : undefined;
  }, 30_000, "the controller's finalizer on the decoration");
}

async function gone(namespace: string, name: string): Promise<boolean> {
  return clients().custom.getNamespacedCustomObject({ ...kusion, namespace, name }).then(() => false, (error: unknown) => (error as { code?: number }).code === 404);
}

describe("the webhook black-holed: connections accepted, never answered", () => {
  test.for(["Ignore", "Fail"] as const)("failurePolicy %s: pods wait out the timeout and are admitted undecorated (Ignore) or refused (Fail); a PodDecoration being deleted still goes; once it answers again all is decorated", async (policy, { namespace, onTestFailed }) => {
    const operator = await startOperator({ args: [`--failure-policy=${policy}`] });
    onTestFailed(() => console.log(`serve's warnings and errors:\n${troubleLines(operator.logs())}`));
    const hole = await blackHole();
    try {
      await apply(decorationYaml(namespace, v1));
      await waitForAdmission(namespace, WEB, "log-shipper", "decorated");
      await protectedDecoration(namespace);

      const restore = await redirectWebhooks(hole.url);
      await waitForAdmission(namespace, WEB, "log-shipper", policy === "Ignore" ? "undecorated" : "refused");
      const { core, custom } = clients();
      const started = Date.now();
      if (policy === "Ignore") {
        const pod = await core.createNamespacedPod({ namespace, body: barePod("while-black-holed") });
        expect(containerNames(pod)).toEqual(["app"]);
      } else {
        await expect(core.createNamespacedPod({ namespace, body: barePod("while-black-holed") })).rejects.toMatchObject({ code: 500 });
      }
      // The API server gave up after the webhook's timeoutSeconds (5), not later.
      const waited = Date.now() - started;
      expect(waited).toBeGreaterThanOrEqual(4_500);
      expect(waited).toBeLessThan(15_000);
      expect(hole.connections()).toBeGreaterThan(0);

      // The controller removes its finalizer: that update skips every webhook (matchConditions).
      await custom.deleteNamespacedCustomObject({ ...kusion, namespace, name: "doomed" });
      await eventually(async () => ((await gone(namespace, "doomed")) ? true : undefined), 60_000, "the PodDecoration being deleted to go while no webhook answers");

      await restore();
      await waitForAdmission(namespace, WEB, "log-shipper", "decorated");
      const after = await core.createNamespacedPod({ namespace, body: barePod("after") });
      expect(containerNames(after)).toEqual(["log-shipper", "app"]);
      const names = (await core.listNamespacedPod({ namespace })).items.map((pod) => pod.metadata?.name).sort();
      expect(names).toEqual(policy === "Ignore" ? ["after", "while-black-holed"] : ["after"]);
    } finally {
      await hole.close();
      expect(await operator.stop()).toBe(0);
    }
  });
});

describe("every replica down while pods are created, then back", () => {
  test("failurePolicy Ignore: what was created meanwhile is admitted undecorated; back up, the escaped CollaSet pod is recreated decorated", async ({ namespace, onTestFailed }) => {
    const first = await startOperator({ args: ["--failure-policy=Ignore"] });
    let second: Operator | undefined;
    onTestFailed(() => console.log(`serve's warnings and errors:\n${troubleLines(first.logs())}\n${troubleLines(second?.logs() ?? "")}`));
    try {
      await apply(collaSetYaml(namespace, { replicas: 2 }));
      await apply(decorationYaml(namespace, v1));
      await waitSettled(namespace, 2, v1);
      // Room for a third pod that someone else creates while no replica runs.
      await apply(collaSetYaml(namespace, { replicas: 3, paused: true }));
      await first.kill("SIGKILL");
      await waitForAdmission(namespace, WEB, "log-shipper", "undecorated");

      const { core } = clients();
      const collaSet = await readCollaSet(namespace);
      const escaped = await core.createNamespacedPod({
        namespace,
        body: {
          metadata: {
            generateName: "web-",
            labels: { ...WEB, [INSTANCE_ID]: "2", [TEMPLATE_REVISION]: collaSet.status?.updatedRevision ?? "" },
            ownerReferences: [{ apiVersion: "apps.kusionstack.io/v1alpha1", kind: "CollaSet", name: "web", uid: collaSet.metadata.uid, controller: true, blockOwnerDeletion: true }],
          },
          spec: { containers: [{ name: "app", image: "e2e.local/app:1", env: [{ name: "MODE", value: "blue" }] }] },
        },
      });
      const bare = await core.createNamespacedPod({ namespace, body: barePod("bare") });
      for (const pod of [escaped, bare]) {
        expect(containerNames(pod)).toEqual(["app"]);
        expect(pod.metadata?.annotations?.[REVISIONS]).toBeUndefined();
      }

      second = await startOperator({ args: ["--failure-policy=Ignore"] });
      await apply(collaSetYaml(namespace, { replicas: 3 }));
      await expectConverged(namespace, { replicas: 3, sidecars: v1, others: { decorated: 0, undecorated: 1 } });
      const pods = (await core.listNamespacedPod({ namespace })).items;
      expect(pods.some((pod) => pod.metadata?.uid === escaped.metadata?.uid)).toBe(false);
    } finally {
      if (second !== undefined) expect(await second.stop()).toBe(0);
      else await first.stop();
    }
  });

  test("failurePolicy Fail: nothing is admitted meanwhile and nothing is lost; back up, every pod asked for is created decorated", async ({ namespace, onTestFailed }) => {
    const first = await startOperator();
    let second: Operator | undefined;
    onTestFailed(() => console.log(`serve's warnings and errors:\n${troubleLines(first.logs())}\n${troubleLines(second?.logs() ?? "")}`));
    try {
      await apply(collaSetYaml(namespace, { replicas: 2 }));
      await apply(decorationYaml(namespace, v1));
      const before = await waitSettled(namespace, 2, v1);
      await first.kill("SIGKILL");
      await waitForAdmission(namespace, WEB, "log-shipper", "refused");
      const { core } = clients();
      await expect(core.createNamespacedPod({ namespace, body: barePod("bare") })).rejects.toMatchObject({ code: 500 });
      // A CollaSet is validated by the same (absent) webhooks: refused too, not half-applied.
      const refused = await kubectl(["apply", "-f", "-"], collaSetYaml(namespace, { replicas: 3 }));
      expect(refused.code).not.toBe(0);
      expect(refused.stderr).toContain("failed calling webhook");
      // The stored spec is what the refused apply would have changed (the status may still be
      // catching up with the pods the killed replica made: it is not what this checks).
      expect((await readCollaSet(namespace)).spec.replicas).toBe(2);

      second = await startOperator();
      await apply(collaSetYaml(namespace, { replicas: 3 }));
      const bare = await core.createNamespacedPod({ namespace, body: barePod("bare") });
      expect(containerNames(bare)).toEqual(["log-shipper", "app"]);
      await expectConverged(namespace, { replicas: 3, sidecars: v1, others: { decorated: 1, undecorated: 0 } });
      // The pods that were there before are still the same pods.
      const uids = new Set((await core.listNamespacedPod({ namespace })).items.map((pod) => pod.metadata?.uid));
      for (const pod of before) expect(uids.has(pod.metadata?.uid)).toBe(true);
    } finally {
      if (second !== undefined) expect(await second.stop()).toBe(0);
      else await first.stop();
    }
  });
});

describe("the API server's trust in the webhook", () => {
  test("a removed or replaced caBundle is set back within seconds, with a Warning Event, and pods are decorated again", async ({ namespace, onTestFailed }) => {
    const operator = await startOperator();
    onTestFailed(() => console.log(`serve's warnings and errors:\n${troubleLines(operator.logs())}`));
    try {
      await apply(decorationYaml(namespace, v1));
      await waitForAdmission(namespace, WEB, "log-shipper", "decorated");
      const { admission, core } = clients();
      const stranger = Buffer.from((await createCertificateAuthority("stranger", 1)).certPem).toString("base64");
      const removedAt = Date.now();
      await admission.patchMutatingWebhookConfiguration({ name: "pod-decorator", body: [{ op: "test", path: "/webhooks/0/name", value: "pods.pod-decorator.kusionstack.io" }, { op: "remove", path: "/webhooks/0/clientConfig/caBundle" }] });
      await admission.patchValidatingWebhookConfiguration({ name: "pod-decorator", body: [{ op: "replace", path: "/webhooks/0/clientConfig/caBundle", value: stranger }] });
      const healed = await eventually(async () => {
        const [mutating, validating] = await Promise.all([admission.readMutatingWebhookConfiguration({ name: "pod-decorator" }), admission.readValidatingWebhookConfiguration({ name: "pod-decorator" })]);
        const bundles = [...(mutating.webhooks ?? []), ...(validating.webhooks ?? [])].map((webhook) => webhook.clientConfig.caBundle);
        return bundles.every((bundle) => bundle !== undefined && bundle !== stranger) && new Set(bundles).size === 1 ? Date.now() - removedAt : undefined;
      }, 60_000, "serve to set the caBundles back", 100);
      console.log(`caBundle removed: set back after ${healed} ms`);
      expect(healed).toBeLessThan(60_000);
      await waitForAdmission(namespace, WEB, "log-shipper", "decorated");
      const events = await eventually(async () => {
        const list = await core.listNamespacedEvent({ namespace: "default", fieldSelector: "reason=CABundleRestored,involvedObject.name=pod-decorator" });
        const kinds = new Set(list.items.filter((event) => (event.lastTimestamp ?? event.eventTime ?? new Date(0)) >= new Date(removedAt - 1000)).map((event) => event.involvedObject.kind));
        return kinds.size === 2 ? list.items : undefined;
      }, 30_000, "a CABundleRestored Event on each configuration");
      expect(events.every((event) => event.type === "Warning" && event.source?.component === "pod-decorator")).toBe(true);
    } finally {
      expect(await operator.stop()).toBe(0);
    }
  });

  test("the shared CA Secret deleted or made unusable is written back, and a new valid CA put there is adopted", async ({ namespace, onTestFailed }) => {
    const [port, metricsPort, healthPort] = [await freePort(), await freePort(), await freePort()];
    const { admission, core } = clients();
    // The configurations a chart would install, empty caBundle included: serve fills it in. The
    // Secret lives in the test's namespace, whose pods the pod webhook must still see.
    await applyWebhookConfigurations(createKubeClient(kubeConfig()).admission.webhookConfigurations, { target: { url: `https://127.0.0.1:${port}` }, caBundlePem: "", scope: { ownNamespace: "pod-decorator-system" } });
    const operator = await startOperator({
      existingWebhookConfigurations: { port, metricsPort, healthPort },
      args: [
        "--webhook-host=127.0.0.1", `--webhook-port=${port}`, `--metrics-port=${metricsPort}`, `--health-port=${healthPort}`,
        "--self-signed", "--self-signed-hosts=127.0.0.1", "--self-signed-ca-secret=webhook-ca", `--namespace=${namespace}`, "--webhook-config-name=pod-decorator",
      ],
    });
    onTestFailed(() => console.log(`serve's warnings and errors:\n${troubleLines(operator.logs())}`));
    const secret = () => core.readNamespacedSecret({ namespace, name: "webhook-ca" });
    const served = async () => Buffer.from((await admission.readMutatingWebhookConfiguration({ name: "pod-decorator" })).webhooks?.[0]?.clientConfig.caBundle ?? "", "base64").toString();
    try {
      const original = await secret();
      const certificate = original.data?.["tls.crt"];
      expect(Buffer.from(certificate ?? "", "base64").toString()).toBe(await served());
      await apply(decorationYaml(namespace, v1));
      await waitForAdmission(namespace, WEB, "log-shipper", "decorated");

      const deletedAt = Date.now();
      await core.deleteNamespacedSecret({ namespace, name: "webhook-ca" });
      const restoredAfter = await eventually(async () => ((await secret().catch(() => undefined))?.data?.["tls.crt"] === certificate ? Date.now() - deletedAt : undefined), 60_000, "the CA Secret to be written back", 100);
      console.log(`CA Secret deleted: written back after ${restoredAfter} ms`);

      await core.patchNamespacedSecret({ namespace, name: "webhook-ca", body: [{ op: "replace", path: "/data/tls.key", value: Buffer.from("garbage").toString("base64") }] });
      await eventually(async () => ((await secret()).data?.["tls.key"] === original.data?.["tls.key"] ? true : undefined), 60_000, "the unusable CA Secret to be written back");
      const reasons = (await core.listNamespacedEvent({ namespace, fieldSelector: "involvedObject.name=webhook-ca" })).items.map((event) => `${event.type} ${event.reason}`);
      expect(reasons).toContain("Warning CASecretRestored");
      expect(await admissionOf(namespace, WEB, "log-shipper")).toBe("decorated");

      // A rotation: another valid CA put into the Secret is adopted, and the caBundles follow.
      const rotated = await createCertificateAuthority("rotated-webhook-ca", 1);
      const current = await secret();
      await core.replaceNamespacedSecret({ namespace, name: "webhook-ca", body: { ...caSecret(namespace, "webhook-ca", rotated), metadata: { ...current.metadata } } });
      await eventually(async () => ((await served()) === rotated.certPem ? true : undefined), 60_000, "the caBundles to trust the rotated CA");
      await waitForAdmission(namespace, WEB, "log-shipper", "decorated");
      // Adopted, not overwritten: the Secret still holds the rotated CA.
      expect(Buffer.from((await secret()).data?.["tls.crt"] ?? "", "base64").toString()).toBe(rotated.certPem);
    } finally {
      expect(await operator.stop()).toBe(0);
    }
  });
});
