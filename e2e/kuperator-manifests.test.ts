// KusionStack manifests, written as its guide and tools write them, through the real API server
// and `pod-decorator serve`'s webhooks: null fields are absent fields, KusionStack's defaults
// and shapes are accepted and mean the same (differences come back as warnings naming them),
// fields accepted but not acted on are named, and a decoration that cannot go into a pod never
// makes an invalid pod.
import { afterAll, beforeAll, describe, expect } from "vitest";
import type { CollaSet } from "../src/api/collaset.ts";
import type { PodDecoration } from "../src/api/poddecoration.ts";
import { statusMessage } from "../src/kube/errors.ts";
import { clients, eventually, kubectl, test } from "./support/cluster.ts";
import { startOperator, type Operator } from "./support/operator.ts";

const GROUP = { group: "apps.kusionstack.io", version: "v1alpha1" };

let operator: Operator;
beforeAll(async () => {
  operator = await startOperator();
});
afterAll(async () => {
  expect(await operator.stop()).toBe(0);
});

/** `kubectl apply` of a manifest that must be accepted; the admission warnings kubectl printed, without the prefix. */
async function apply(namespace: string, manifest: string): Promise<string[]> {
  const result = await kubectl(["apply", "-n", namespace, "-f", "-"], manifest);
  expect(result.code, result.stderr).toBe(0);
  return result.stderr.split("\n").filter((line) => line.startsWith("Warning: ")).map((line) => line.slice("Warning: ".length));
}

/** The field path each warning starts with. */
const fields = (warnings: readonly string[]) => warnings.map((warning) => warning.slice(0, warning.indexOf(":")));

async function stored<T>(namespace: string, plural: string, name: string): Promise<T> {
  return (await clients().custom.getNamespacedCustomObject({ ...GROUP, namespace, plural, name })) as T;
}

describe("KusionStack manifests through the real webhooks", () => {
  test("a PodDecoration written with empty keys, historyLimit 0, no targetPolicy, and a partition with a selector", async ({ namespace }) => {
    const warnings = await apply(namespace, `
apiVersion: apps.kusionstack.io/v1alpha1
kind: PodDecoration
metadata:
  name: sample-pd
  labels:
spec:
  historyLimit: 0
  weight:
  selector:
    matchLabels:
      app: foo
  updateStrategy:
    rollingUpdate:
      partition: 1
      selector:
        matchLabels:
          collaset.kusionstack.io/instance-id: "0"
  template:
    metadata:
    - patchPolicy: MergePatchJson
      annotations:
        cafe.sofastack.io/decoration-version: '[{"name":"sample-pd","version":"v2"}]'
    primaryContainers:
    - name: foo
      image:
      env:
      - name: APP_NAME
        value: foo
    - env:
      - name: EVERYWHERE
        value: "1"
    containers:
    - injectPolicy: AfterPrimaryContainer
      name: sidecar-a
      image: ubuntu:22.04
      command: ["sleep", "2h"]
      resources:
      volumeMounts:
      - name: sample-volume
        mountPath: /vol/sample
    volumes:
    - name: sample-volume
      emptyDir: {}
    tolerations:
`);
    expect(fields(warnings)).toEqual(["spec.template.primaryContainers[0].targetPolicy", "spec.updateStrategy.rollingUpdate"]);
    const pd = await stored<PodDecoration>(namespace, "poddecorations", "sample-pd");
    expect(pd.spec.historyLimit).toBe(20);
    expect(pd.spec.template?.primaryContainers?.map((patch) => patch.targetPolicy)).toEqual(["ByName", "All"]);
    expect(pd.spec.template?.primaryContainers?.[0]).not.toHaveProperty("image");
    expect(JSON.stringify(pd.spec)).not.toContain("null");
  });

  test("a PodDecoration without a selector is accepted, with a warning that it selects no pod", async ({ namespace }) => {
    const warnings = await apply(namespace, `
apiVersion: apps.kusionstack.io/v1alpha1
kind: PodDecoration
metadata:
  name: no-selector
spec:
  template:
    containers:
    - name: sidecar
      image: registry.k8s.io/pause:3.10
`);
    expect(warnings).toEqual([expect.stringMatching(/^spec\.selector: not set, so this decoration selects no pod/)]);
  });

  test("a CollaSet's fields that are accepted but not acted on are named, each one", async ({ namespace }) => {
    const warnings = await apply(namespace, `
apiVersion: apps.kusionstack.io/v1alpha1
kind: CollaSet
metadata:
  name: foo
spec:
  replicas: 0
  historyLimit: 0
  selector:
    matchLabels:
      app: foo
  namingStrategy:
    podNamingSuffixPolicy: PersistentSequence
  scaleStrategy:
    context: shared
    operationDelaySeconds: 5
  updateStrategy:
    operationDelaySeconds:
    rollingUpdate:
      byPartition:
        partition: 0
  template:
    metadata:
      labels:
        app: foo
    spec:
      containers:
      - image: nginx:1.25.2
        name: foo
`);
    // scaleStrategy.context is acted on now (a shared ResourceContext); kuperator itself reads
    // scaleStrategy.operationDelaySeconds nowhere, nor does this project, and says so.
    expect(fields(warnings)).toEqual(["spec.scaleStrategy.operationDelaySeconds"]);
    const cls = await stored<CollaSet>(namespace, "collasets", "foo");
    expect(cls.spec.historyLimit).toBe(0);
    expect(cls.spec.updateStrategy).not.toHaveProperty("operationDelaySeconds");
  });

  test("a pod that lacks the volume a decoration's mount needs is refused with why, never made invalid", async ({ namespace }) => {
    const warnings = await apply(namespace, `
apiVersion: apps.kusionstack.io/v1alpha1
kind: PodDecoration
metadata:
  name: certs
spec:
  selector:
    matchLabels:
      app: web
  template:
    primaryContainers:
    - volumeMounts:
      - name: tls
        mountPath: /etc/tls
`);
    expect(warnings).toContainEqual(expect.stringMatching(/^spec\.template\.primaryContainers\[0\]\.volumeMounts\[0\]\.name: volume "tls" is not declared/));
    const { core } = clients();
    const body = (volumes: unknown[]) => ({ metadata: { generateName: "web-", labels: { app: "web" } }, spec: { containers: [{ name: "app", image: "registry.k8s.io/pause:3.10" }], volumes } });
    // The webhook's cache learns the decoration shortly after it is written.
    const refusal = await eventually(async () => {
      try {
        await core.createNamespacedPod({ namespace, body: body([]) as never, dryRun: "All" });
        return undefined;
      } catch (error) {
        return statusMessage(error);
      }
    }, 15_000, "the webhook to know the decoration");
    expect(refusal).toMatch(/PodDecoration [^/]+\/certs: rendering revision \S+ into this pod would make a pod the API server refuses: spec\.containers\[app\]\.volumeMounts\[\/etc\/tls\]\.name: Not found: volume \\?"tls\\?"/);
    const created = await core.createNamespacedPod({ namespace, body: body([{ name: "tls", secret: { secretName: "tls" } }]) as never, dryRun: "All" });
    expect(created.spec?.containers[0]?.volumeMounts?.map((mount) => mount.mountPath)).toContain("/etc/tls");
  });
});
