// Smoke tests proving the control plane under the e2e suite is a real one:
// kubectl, CRDs with status, ControllerRevisions, garbage collection, and the
// API server calling an HTTPS admission webhook and applying its JSON Patch.
import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import type { V1ControllerRevision, V1CustomResourceDefinition } from "@kubernetes/client-node";
import { describe, expect } from "vitest";
import { createCertificateAuthority, issueCertificate } from "../src/webhook/certificates.ts";
import { clients, eventually, kubectl, test, uniqueName } from "./support/cluster.ts";

describe("the control plane", () => {
  test("kubectl of the same version lists the built-in namespaces", async () => {
    const result = await kubectl(["get", "namespaces", "-o", "name"]);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(result.stdout.split("\n")).toEqual(expect.arrayContaining(["namespace/default", "namespace/kube-system"]));
    const version = await kubectl(["version", "-o", "json"]);
    const parsed = JSON.parse(version.stdout) as { clientVersion: { gitVersion: string }; serverVersion: { gitVersion: string } };
    expect(parsed.clientVersion.gitVersion).toMatch(/^v1\.\d+\.\d+$/);
    expect(parsed.serverVersion.gitVersion).toBe(parsed.clientVersion.gitVersion);
  });

  test("installs a CRD with a status subresource and round-trips a custom object", async ({ namespace }) => {
    const { apiextensions, custom } = clients();
    const group = `${uniqueName("smoke")}.e2e.pod-decorator.io`;
    const crd: V1CustomResourceDefinition = {
      metadata: { name: `widgets.${group}` },
      spec: {
        group,
        scope: "Namespaced",
        names: { plural: "widgets", singular: "widget", kind: "Widget", listKind: "WidgetList" },
        versions: [{
          name: "v1",
          served: true,
          storage: true,
          subresources: { status: {} },
          schema: {
            openAPIV3Schema: {
              type: "object",
              properties: {
                spec: { type: "object", properties: { size: { type: "integer", minimum: 1 } } },
                status: { type: "object", properties: { observed: { type: "integer" } } },
              },
            },
          },
        }],
      },
    };
    await apiextensions.createCustomResourceDefinition({ body: crd });
    try {
      await eventually(async () => {
        const current = await apiextensions.readCustomResourceDefinition({ name: crd.metadata!.name! });
        return current.status?.conditions?.some((c) => c.type === "Established" && c.status === "True") ? true : undefined;
      }, 30_000, "the CRD to become Established");

      const target = { group, version: "v1", namespace, plural: "widgets" };
      const created = (await eventually(
        () => custom.createNamespacedCustomObject({ ...target, body: { apiVersion: `${group}/v1`, kind: "Widget", metadata: { name: "w" }, spec: { size: 3 }, status: { observed: 99 } } }),
        30_000,
        "the new resource to be served",
      )) as { metadata: { generation: number }; status?: unknown };
      // The status subresource is real: status written with the main resource is dropped.
      expect(created.status).toBeUndefined();
      await custom.patchNamespacedCustomObjectStatus({ ...target, name: "w", body: [{ op: "add", path: "/status", value: { observed: created.metadata.generation } }] });
      const read = (await custom.getNamespacedCustomObject({ ...target, name: "w" })) as { spec: { size: number }; status: { observed: number } };
      expect(read.spec.size).toBe(3);
      expect(read.status.observed).toBe(created.metadata.generation);

      // And the schema is enforced.
      await expect(
        custom.createNamespacedCustomObject({ ...target, body: { apiVersion: `${group}/v1`, kind: "Widget", metadata: { name: "bad" }, spec: { size: 0 } } }),
      ).rejects.toThrow(/spec.size/);
    } finally {
      await apiextensions.deleteCustomResourceDefinition({ name: crd.metadata!.name! });
    }
  });

  test("round-trips a ControllerRevision", async ({ namespace }) => {
    const { apps } = clients();
    const revision: V1ControllerRevision = {
      metadata: { name: "smoke-abc123", labels: { "controller.kubernetes.io/hash": "abc123" } },
      revision: 3,
      data: { spec: { template: { containers: [{ name: "sidecar", image: "busybox:1" }] } } },
    };
    await apps.createNamespacedControllerRevision({ namespace, body: revision });
    const read = await apps.readNamespacedControllerRevision({ namespace, name: "smoke-abc123" });
    expect(read.revision).toBe(3);
    expect(read.data).toEqual(revision.data);
    expect(read.metadata?.labels?.["controller.kubernetes.io/hash"]).toBe("abc123");
  });

  test("the garbage collector deletes a dependent when its owner goes", async ({ namespace }) => {
    const { core } = clients();
    const owner = await core.createNamespacedConfigMap({ namespace, body: { metadata: { name: "owner" }, data: { a: "1" } } });
    await core.createNamespacedConfigMap({
      namespace,
      body: {
        metadata: { name: "dependent", ownerReferences: [{ apiVersion: "v1", kind: "ConfigMap", name: "owner", uid: owner.metadata!.uid! }] },
        data: { b: "2" },
      },
    });
    await core.deleteNamespacedConfigMap({ namespace, name: "owner", propagationPolicy: "Background" });
    await eventually(async () => {
      const names = (await core.listNamespacedConfigMap({ namespace })).items.map((item) => item.metadata?.name);
      return names.includes("dependent") ? undefined : names;
    }, 60_000, "the dependent ConfigMap to be garbage-collected");
  });

  test("calls an HTTPS mutating webhook at a loopback URL and stores its patch", async ({ namespace }) => {
    const { core, admission } = clients();
    const ca = await createCertificateAuthority("smoke-webhook-ca", 1);
    const serving = await issueCertificate(ca, { commonName: "smoke-webhook", hosts: ["127.0.0.1"], usage: "server", validityDays: 1 });
    let calls = 0;
    const server = await listen(createServer({ key: serving.keyPem, cert: serving.certPem }, (request, response) => {
      let body = "";
      request.on("data", (chunk: Buffer) => (body += chunk.toString()));
      request.on("end", () => {
        calls++;
        const review = JSON.parse(body) as { request: { uid: string } };
        const patch = [{ op: "add", path: "/metadata/labels", value: { "smoke.pod-decorator.io/mutated": "yes" } }];
        response.setHeader("content-type", "application/json");
        response.end(JSON.stringify({
          apiVersion: "admission.k8s.io/v1",
          kind: "AdmissionReview",
          response: { uid: review.request.uid, allowed: true, patchType: "JSONPatch", patch: Buffer.from(JSON.stringify(patch)).toString("base64") },
        }));
      });
    }));
    const name = uniqueName("smoke-webhook");
    try {
      const port = (server.address() as AddressInfo).port;
      await admission.createMutatingWebhookConfiguration({
        body: {
          metadata: { name },
          webhooks: [{
            name: "smoke.pod-decorator.io",
            clientConfig: { url: `https://127.0.0.1:${port}/mutate`, caBundle: Buffer.from(ca.certPem).toString("base64") },
            rules: [{ apiGroups: [""], apiVersions: ["v1"], operations: ["CREATE"], resources: ["pods"] }],
            namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": namespace } },
            sideEffects: "None",
            admissionReviewVersions: ["v1"],
            failurePolicy: "Fail",
            timeoutSeconds: 5,
          }],
        },
      });
      const pod = (podName: string) => ({ metadata: { name: podName }, spec: { containers: [{ name: "app", image: "registry.k8s.io/pause:3.10" }] } });
      // The API server picks up new webhook configurations after a short delay.
      await eventually(async () => {
        const probe = await core.createNamespacedPod({ namespace, body: pod("probe"), dryRun: "All" });
        return probe.metadata?.labels?.["smoke.pod-decorator.io/mutated"];
      }, 30_000, "the webhook to become active");

      const callsBefore = calls;
      await core.createNamespacedPod({ namespace, body: pod("mutated") });
      const stored = await core.readNamespacedPod({ namespace, name: "mutated" });
      expect(stored.metadata?.labels).toEqual({ "smoke.pod-decorator.io/mutated": "yes" });
      expect(calls).toBe(callsBefore + 1);
    } finally {
      await admission.deleteMutatingWebhookConfiguration({ name }).catch(() => undefined);
      server.close();
    }
  });
});

function listen(server: Server): Promise<Server> {
  return new Promise((done) => server.listen(0, "127.0.0.1", () => done(server)));
}
