// The admission webhooks on the real control plane: the API server calls `pod-decorator serve`
// over HTTPS for every pod created, and for every PodDecoration written.
import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import type { V1Pod } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect } from "vitest";
import { createCertificateAuthority, issueCertificate } from "../src/webhook/certificates.ts";
import { clients, kubectl, eventually, test, uniqueName } from "./support/cluster.ts";
import { startOperator, type Operator } from "./support/operator.ts";

const decoration = (namespace: string) => `
apiVersion: apps.kusionstack.io/v1alpha1
kind: PodDecoration
metadata:
  name: logging
  namespace: ${namespace}
spec:
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      - patchPolicy: Overwrite
        labels:
          logging.example.com/shipped: "true"
    containers:
      - name: log-shipper
        image: cr.fluentbit.io/fluent/fluent-bit:3.2.2
        injectPolicy: AfterPrimaryContainer
    primaryContainers:
      - targetPolicy: All
        env:
          - name: LOG_DIR
            value: /var/log/app
`;

function containerNames(pod: V1Pod): string[] {
  return (pod.spec?.containers ?? []).map((container) => container.name);
}

function recordedRevisions(pod: V1Pod): { name: string; revision: string }[] {
  return JSON.parse(pod.metadata?.annotations?.["poddecoration.kusionstack.io/revisions"] ?? "null") as { name: string; revision: string }[];
}

/** Applies the decoration and waits until the webhook's cache has it (a dry-run pod gets the sidecar). */
async function applyDecoration(namespace: string): Promise<void> {
  const applied = await kubectl(["apply", "-f", "-"], decoration(namespace));
  expect(applied.stderr).toBe("");
  const body = { metadata: { generateName: "probe-", labels: { app: "web" } }, spec: { containers: [{ name: "app", image: "nginx:1.27" }] } };
  await eventually(async () => (containerNames(await clients().core.createNamespacedPod({ namespace, body, dryRun: "All" })).includes("log-shipper") ? true : undefined), 15_000, "the webhook to know the decoration");
}

let operator: Operator;
beforeAll(async () => {
  operator = await startOperator();
});
afterAll(async () => {
  expect(await operator.stop()).toBe(0);
});

describe("the pod webhook", () => {
  test("decorates a bare pod and a Deployment-style pod when they are created", async ({ namespace }) => {
    await applyDecoration(namespace);

    const run = await kubectl(["run", "bare", "-n", namespace, "--image=nginx:1.27", "--labels=app=web"]);
    expect(run.code).toBe(0);
    const { core } = clients();
    // What a ReplicaSet would create: generateName, a pod-template-hash, no name yet.
    const replica = await core.createNamespacedPod({
      namespace,
      body: {
        metadata: { generateName: "web-7d4b9c-", labels: { app: "web", "pod-template-hash": "7d4b9c" } },
        spec: { containers: [{ name: "app", image: "nginx:1.27" }, { name: "metrics", image: "exporter:1" }] },
      },
    });

    for (const name of ["bare", replica.metadata!.name!]) {
      const pod = await core.readNamespacedPod({ namespace, name });
      expect(containerNames(pod).at(-1)).toBe("log-shipper");
      expect(containerNames(pod).filter((container) => container === "log-shipper")).toHaveLength(1);
      const [recorded, ...others] = recordedRevisions(pod);
      expect(others).toEqual([]);
      expect(recorded?.name).toBe("logging");
      expect(recorded?.revision).toMatch(/^logging-[bcdfghjklmnpqrstvwxz2456789]{10}$/);
      expect(pod.metadata?.labels).toMatchObject({
        app: "web",
        "logging.example.com/shipped": "true",
        "poddecoration.kusionstack.io/pd-logging": recorded!.revision,
      });
      // Every primary container got the env; the sidecar did not.
      for (const container of pod.spec!.containers) {
        const env = container.env?.find((variable) => variable.name === "LOG_DIR");
        if (container.name === "log-shipper") expect(env).toBeUndefined();
        else expect(env?.value).toBe("/var/log/app");
      }
      // No owner reference: deleting the decoration must never garbage-collect a pod.
      expect(pod.metadata?.ownerReferences ?? []).toEqual([]);
    }
  });

  test("shows the decorated pod on a server-side dry run and stores nothing", async ({ namespace }) => {
    await applyDecoration(namespace);
    const dryRun = await kubectl(["create", "--dry-run=server", "-o", "json", "-n", namespace, "-f", "-"], JSON.stringify({
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "preview", labels: { app: "web" } },
      spec: { containers: [{ name: "app", image: "nginx:1.27" }] },
    }));
    expect(dryRun.code).toBe(0);
    const pod = JSON.parse(dryRun.stdout) as V1Pod;
    expect(containerNames(pod)).toEqual(["app", "log-shipper"]);
    expect(recordedRevisions(pod).map((entry) => entry.name)).toEqual(["logging"]);
    const { core } = clients();
    expect((await core.listNamespacedPod({ namespace })).items).toEqual([]);
  });

  test("leaves a pod in an opted-out namespace untouched", async ({ namespace }) => {
    await kubectl(["label", "namespace", namespace, "poddecoration.kusionstack.io/injection=disabled"]);
    await kubectl(["apply", "-f", "-"], decoration(namespace));
    const { core } = clients();
    const body = { metadata: { name: "untouched", labels: { app: "web" } }, spec: { containers: [{ name: "app", image: "nginx:1.27" }] } };
    // The API server sees namespace labels through its own cache: wait until the opt-out is in effect.
    await eventually(async () => {
      const preview = await core.createNamespacedPod({ namespace, body, dryRun: "All" });
      return containerNames(preview).length === 1 ? true : undefined;
    }, 10_000, "the opt-out label to take effect");
    const pod = await core.createNamespacedPod({ namespace, body });
    expect(containerNames(pod)).toEqual(["app"]);
    expect(pod.metadata?.annotations ?? {}).not.toHaveProperty("poddecoration.kusionstack.io/revisions");
  });

  test("is called once when another mutating webhook changes the pod after it: nothing added twice, the other's container left alone", async ({ namespace }) => {
    await applyDecoration(namespace);
    const other = await otherWebhook(namespace);
    try {
      const { core } = clients();
      const pod = await eventually(async () => {
        const created = await core.createNamespacedPod({
          namespace,
          body: { metadata: { generateName: "reinvoked-", labels: { app: "web" } }, spec: { containers: [{ name: "app", image: "nginx:1.27" }] } },
        });
        return created.metadata?.labels?.["mesh.example.com/injected"] === "true" ? created : undefined;
      }, 30_000, "the second webhook to be active");
      // Both webhooks ran, ours first (configurations are called in name order) and not again
      // (reinvocationPolicy Never): the proxy the other added got none of the primaries' env.
      expect(containerNames(pod)).toEqual(["app", "log-shipper", "mesh-proxy"]);
      expect(recordedRevisions(pod).map((entry) => entry.name)).toEqual(["logging"]);
      expect(pod.spec?.containers.find((container) => container.name === "mesh-proxy")?.env).toBeUndefined();
      expect(other.calls()).toBeGreaterThan(0);
    } finally {
      await other.stop();
    }
  });
});

describe("PodDecoration admission", () => {
  test("refuses an invalid PodDecoration with the field path and reason", async ({ namespace }) => {
    const result = await kubectl(["apply", "-n", namespace, "-f", "-"], `
apiVersion: apps.kusionstack.io/v1alpha1
kind: PodDecoration
metadata:
  name: bad
spec:
  selector:
    matchLabels:
      app: web
  template:
    primaryContainers:
      - image: app:2
        volumeMounts:
          - name: data
            mountPath: /data
            subPath: ../up
    volumes:
      - name: data
        emptyDir: {}
`);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain('admission webhook "poddecorations.pod-decorator.kusionstack.io" denied the request');
    expect(result.stderr).toMatch(/PodDecoration\/bad: spec\.template\.primaryContainers\[0\]\.volumeMounts\[0\]\.subPath: Invalid value: \\?"\.\.\/up\\?": must not contain '\.\.'/);
    const { custom } = clients();
    const list = (await custom.listNamespacedCustomObject({ group: "apps.kusionstack.io", version: "v1alpha1", namespace, plural: "poddecorations" })) as { items: unknown[] };
    expect(list.items).toEqual([]);
  });

  test("writes the defaults of a KusionStack manifest, including its top-level weight", async ({ namespace }) => {
    const result = await kubectl(["apply", "-n", namespace, "-f", "-"], `
apiVersion: apps.kusionstack.io/v1alpha1
kind: PodDecoration
metadata:
  name: kusion
spec:
  weight: 7
  selector:
    matchLabels:
      app: web
  template:
    containers:
      - name: sidecar
        image: sidecar:1
`);
    expect(result.stderr).toBe("");
    const stored = await kubectl(["get", "pd", "kusion", "-n", namespace, "-o", "json"]);
    const pd = JSON.parse(stored.stdout) as { spec: { weight: number; historyLimit: number; template: { containers: { injectPolicy: string }[] } } };
    expect(pd.spec.weight).toBe(7);
    expect(pd.spec.historyLimit).toBe(20);
    expect(pd.spec.template.containers[0]!.injectPolicy).toBe("BeforePrimaryContainer");
  });
});

/** A second mutating webhook, as a service mesh would install, that adds a proxy container. */
async function otherWebhook(namespace: string): Promise<{ calls(): number; stop(): Promise<void> }> {
  const ca = await createCertificateAuthority("mesh-ca", 1);
  const serving = await issueCertificate(ca, { commonName: "mesh", hosts: ["127.0.0.1"], usage: "server", validityDays: 1 });
  let calls = 0;
  const server: Server = createServer({ key: serving.keyPem, cert: serving.certPem }, (request, response) => {
    let body = "";
    request.on("data", (chunk: Buffer) => (body += chunk.toString()));
    request.on("end", () => {
      calls++;
      const review = JSON.parse(body) as { request: { uid: string; object: V1Pod } };
      const pod = review.request.object;
      const patch = pod.spec?.containers.some((container) => container.name === "mesh-proxy")
        ? []
        : [
          { op: "add", path: "/spec/containers/-", value: { name: "mesh-proxy", image: "mesh-proxy:1" } },
          { op: "add", path: "/metadata/labels/mesh.example.com~1injected", value: "true" },
        ];
      response.setHeader("content-type", "application/json");
      response.end(JSON.stringify({
        apiVersion: "admission.k8s.io/v1",
        kind: "AdmissionReview",
        response: { uid: review.request.uid, allowed: true, ...(patch.length > 0 ? { patchType: "JSONPatch", patch: Buffer.from(JSON.stringify(patch)).toString("base64") } : {}) },
      }));
    });
  });
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  // Configurations are called in name order: after "pod-decorator".
  const name = uniqueName("zz-mesh");
  const { admission } = clients();
  await admission.createMutatingWebhookConfiguration({
    body: {
      metadata: { name },
      webhooks: [{
        name: "proxy.mesh.example.com",
        clientConfig: { url: `https://127.0.0.1:${(server.address() as AddressInfo).port}/inject`, caBundle: Buffer.from(ca.certPem).toString("base64") },
        rules: [{ apiGroups: [""], apiVersions: ["v1"], operations: ["CREATE"], resources: ["pods"] }],
        namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": namespace } },
        sideEffects: "None",
        admissionReviewVersions: ["v1"],
        reinvocationPolicy: "IfNeeded",
        failurePolicy: "Fail",
      }],
    },
  });
  return {
    calls: () => calls,
    async stop() {
      await admission.deleteMutatingWebhookConfiguration({ name }).catch(() => undefined);
      server.close();
    },
  };
}
