// What differs by Kubernetes version (docs/kubernetes-versions.md), on the run's control plane:
// `make test` runs this file on the newest minor and on the oldest the chart claims. A decoration
// that uses a field of a later feature than the cluster's version is refused at admission, naming
// the field and both versions (it would be dropped from pods, or its pods refused); on a version
// that has the feature it is admitted and its pods carry the field. Whatever the API server drops
// all the same (a field it does not know, a feature gate turned off) is reported by the
// controller as not enforced — in TemplateValid, an Event and serve's log — on every version.
import { afterAll, beforeAll, describe, expect, inject } from "vitest";
import { parseKubernetesVersion } from "../src/api/kubernetes-versions.ts";
import { clients, eventually, kubectl, test } from "./support/cluster.ts";
import { startOperator, type Operator } from "./support/operator.ts";

const group = { group: "apps.kusionstack.io", version: "v1alpha1", plural: "poddecorations" };

interface Condition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
}
interface Decoration {
  metadata: { generation: number };
  status?: { observedGeneration?: number; conditions?: Condition[] };
}

/** A PodDecoration whose one sidecar is `sidecar` (YAML lines under `- name: proxy`, indented 8). */
function decoration(namespace: string, name: string, sidecar: string): string {
  return `
apiVersion: apps.kusionstack.io/v1alpha1
kind: PodDecoration
metadata:
  name: ${name}
  namespace: ${namespace}
spec:
  selector:
    matchLabels:
      app: web
  template:
    containers:
      - name: proxy
        image: envoy:1
${sidecar}`;
}

async function templateValid(namespace: string, name: string): Promise<Condition> {
  return await eventually(async () => {
    const current = (await clients().custom.getNamespacedCustomObject({ ...group, namespace, name })) as Decoration;
    if (current.status?.observedGeneration !== current.metadata.generation) return undefined;
    return current.status.conditions?.find((condition) => condition.type === "TemplateValid");
  }, 30_000, `TemplateValid of ${namespace}/${name}`);
}

async function createPod(namespace: string): Promise<Record<string, unknown>> {
  const pod = await clients().core.createNamespacedPod({ namespace, body: { metadata: { name: "web", labels: { app: "web" } }, spec: { containers: [{ name: "app", image: "web:1" }] } } });
  const proxy = pod.spec?.containers.find((container) => container.name === "proxy");
  expect(proxy, "the decoration's sidecar").toBeDefined();
  return proxy as unknown as Record<string, unknown>;
}

const version = inject("kubernetesVersion");
const minor = parseKubernetesVersion(version)?.minor ?? 0;

let operator: Operator;
beforeAll(async () => {
  expect(minor, `the API server's version ${version}`).toBeGreaterThan(0);
  operator = await startOperator();
});
afterAll(async () => {
  expect(await operator.stop()).toBe(0);
});

describe(`Kubernetes ${version}: what a decoration may use`, () => {
  // A field, the feature gate it needs, the first minor where that is on by default, and the
  // sidecar's field as the API server returns it in a pod of a version that has it.
  const cases = [
    { field: "resizePolicy", gate: "InPlacePodVerticalScaling", since: 33, what: "container resize policies (in-place pod resize)", yaml: "        resizePolicy:\n          - resourceName: cpu\n            restartPolicy: NotRequired\n", inPod: [{ resourceName: "cpu", restartPolicy: "NotRequired" }] },
    { field: "restartPolicy", gate: "ContainerRestartRules", since: 35, what: "restart policies of regular containers and container restart rules", yaml: "        restartPolicy: Always\n", inPod: "Always" },
  ];

  for (const { field, gate, since, what, yaml, inPod } of cases) {
    test(`${field} (${gate}, on by default from 1.${String(since)}): ${minor < since ? "refused, naming the field and both versions" : "admitted, and the pods carry it"}`, async ({ namespace }) => {
      const applied = await kubectl(["apply", "-f", "-"], decoration(namespace, "sidecar", yaml));
      if (minor < since) {
        expect(applied.code).not.toBe(0);
        expect(applied.stderr).toContain(`spec.template.containers[0].${field}: Forbidden: ${what} need Kubernetes 1.${String(since)} or later (feature gate ${gate}); this cluster's API server is ${version}`);
        // Nothing was stored, so no pod can be created without it in silence.
        const stored = await kubectl(["get", "pd", "sidecar", "-n", namespace]);
        expect(stored.stderr).toContain("NotFound");
        return;
      }
      expect(applied.code, applied.stderr).toBe(0);
      expect((await createPod(namespace))[field]).toEqual(inPod);
      expect(await templateValid(namespace, "sidecar")).toMatchObject({ status: "True", reason: "DryRunAccepted" });
    });
  }

  test("a field the API server drops is reported as not enforced: TemplateValid=False (FieldsDropped), an Event and serve's log", async ({ namespace }) => {
    // A field of a newer API than any this project knows: the API server prunes it from pods.
    const applied = await kubectl(["apply", "-f", "-"], decoration(namespace, "future", "        futureIsolation:\n          mode: strict\n"));
    expect(applied.code, applied.stderr).toBe(0);
    const condition = await templateValid(namespace, "future");
    expect(condition).toMatchObject({ status: "False", reason: "FieldsDropped" });
    expect(condition.message).toMatch(new RegExp(`^the API server \\(Kubernetes ${version.replace(/\./g, "\\.")}\\) accepts a pod rendered with revision \\S+ but drops spec\\.containers\\[name=proxy\\]\\.futureIsolation: that part of the decoration is not enforced on this cluster`));
    const events = await eventually(async () => {
      const list = await clients().core.listNamespacedEvent({ namespace, fieldSelector: "involvedObject.name=future,reason=TemplateNotEnforced" });
      return list.items.length > 0 ? list.items : undefined;
    }, 15_000, "a TemplateNotEnforced event");
    expect(events[0]!.type).toBe("Warning");
    expect(operator.logs()).toContain("the API server drops fields of this decoration from pods: they are not enforced");
    // What the controller reports is what pods get: the webhook injects the field and the API server drops it.
    expect(await createPod(namespace)).not.toHaveProperty("futureIsolation");
  });

  test("serve logs the version it checks decorations against, and what that version lacks", () => {
    expect(operator.logs()).toContain(`Kubernetes ${version}: `);
    if (minor < 33) expect(operator.logs()).toContain("container resize policies (in-place pod resize) (1.33, InPlacePodVerticalScaling)");
  });
});
