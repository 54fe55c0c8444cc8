// The generated CRDs and the samples on a real API server: the CRDs install (idempotently) and
// are served as generated; every sample is accepted and defaulted by the API server's own
// CRD machinery; the schemas enforce what they declare; and a pod rendered from each sample
// decoration passes a server-side dry-run create.
import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, onTestFinished } from "vitest";
import { parseAllDocuments } from "yaml";
import type { CollaSet } from "../src/api/collaset.ts";
import { customResourceDefinitions } from "../src/api/crd.ts";
import type { Pod } from "../src/api/pod.ts";
import type { PodDecoration } from "../src/api/poddecoration.ts";
import { decoratePod, liveRevision } from "../src/decoration/decorate.ts";
import { decorationKey } from "../src/decoration/decoration-kind.ts";
import { clients, eventually, kubectl, test } from "./support/cluster.ts";

const CRD_DIR = fileURLToPath(new URL("../config/crd/", import.meta.url));
const SAMPLES_DIR = fileURLToPath(new URL("../config/samples/", import.meta.url));
const GROUP = { group: "apps.kusionstack.io", version: "v1alpha1" };
const OWN_GROUP = { group: "pod-decorator.io", version: "v1alpha1" };

const samples = readdirSync(SAMPLES_DIR).filter((file) => file.endsWith(".yaml")).sort().flatMap((file) =>
  parseAllDocuments(readFileSync(`${SAMPLES_DIR}${file}`, "utf8")).map((document) => ({ file, object: document.toJS() as { kind: string; metadata: { name: string }; spec: { historyLimit?: number } } })));
// A ClusterPodDecoration is one of a namespace's decorations as seen from it (DESIGN §12).
const sampleDecorations = samples.filter((sample) => sample.object.kind === "PodDecoration" || sample.object.kind === "ClusterPodDecoration").map((sample) => sample.object as unknown as PodDecoration);
const sampleClusterDecorations = samples.filter((sample) => sample.object.kind === "ClusterPodDecoration").map((sample) => sample.object.metadata.name);
const sampleCollaSet = samples.find((sample) => sample.object.kind === "CollaSet")?.object as unknown as CollaSet;

/** Installs the CRDs with server-side apply (a no-op when the control plane already has them) and waits for Established. */
async function installCrds(): Promise<void> {
  const applied = await kubectl(["apply", "--server-side", "--force-conflicts", "--field-manager=pod-decorator-e2e", "-f", CRD_DIR]);
  expect(applied.stderr).toBe("");
  expect(applied.code).toBe(0);
  const { apiextensions } = clients();
  for (const crd of customResourceDefinitions()) {
    await eventually(async () => {
      const current = await apiextensions.readCustomResourceDefinition({ name: crd.metadata.name });
      return current.status?.conditions?.some((condition) => condition.type === "Established" && condition.status === "True") ? true : undefined;
    }, 30_000, `${crd.metadata.name} to be Established`);
  }
}

/** A pod as the sample CollaSet would create it. */
function samplePod(namespace: string, name: string): Pod {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name, namespace, labels: { ...sampleCollaSet.spec.template.metadata?.labels } },
    spec: structuredClone(sampleCollaSet.spec.template.spec) ?? { containers: [] },
  };
}

/** The API server must validate the pod exactly as rendered, so no webhook may decorate it again. */
async function disablePodInjection(namespace: string): Promise<void> {
  const labelled = await kubectl(["label", "namespace", namespace, "poddecoration.kusionstack.io/injection=disabled"]);
  expect(labelled.code, labelled.stderr).toBe(0);
}

describe("CRDs and samples on a real API server", () => {
  test("the generated CRDs apply, twice, and are served as generated", async () => {
    await installCrds();
    await installCrds();
    for (const crd of customResourceDefinitions()) {
      // Read through kubectl: the client library's models rename fields like x-kubernetes-*.
      const read = await kubectl(["get", "crd", crd.metadata.name, "-o", "json"]);
      expect(read.code, read.stderr).toBe(0);
      const served = JSON.parse(read.stdout) as { spec: typeof crd.spec; status: { conditions: { type: string; status: string }[] } };
      expect(served.spec.names).toEqual(crd.spec.names);
      expect(served.spec.versions).toEqual(crd.spec.versions);
      // A schema that is not structural shows as a condition, not as an error.
      expect(served.status.conditions.filter((condition) => condition.status === "True").map((condition) => condition.type).sort()).toEqual(["Established", "NamesAccepted"]);
    }
  });

  test("every sample is accepted, and defaulted by the CRD schema", async ({ namespace }) => {
    await installCrds();
    for (const file of new Set(samples.map((sample) => sample.file))) {
      const applied = await kubectl(["apply", "--server-side", "--field-manager=pod-decorator-e2e", "-n", namespace, "-f", `${SAMPLES_DIR}${file}`]);
      expect(applied.code, `${file}: ${applied.stderr}`).toBe(0);
    }
    const { custom } = clients();
    // Cluster-scoped: removed again, whatever the test finds.
    onTestFinished(async () => {
      if (sampleClusterDecorations.length > 0) await kubectl(["delete", "clusterpoddecorations.pod-decorator.io", ...sampleClusterDecorations, "--ignore-not-found", "--wait=false"]);
    });
    for (const sample of samples) {
      const name = sample.object.metadata.name;
      const stored = (sample.object.kind === "ClusterPodDecoration"
        ? await custom.getClusterCustomObject({ ...OWN_GROUP, plural: "clusterpoddecorations", name })
        : await custom.getNamespacedCustomObject({ ...GROUP, namespace, plural: sample.object.kind === "CollaSet" ? "collasets" : "poddecorations", name })) as { spec: Record<string, unknown> };
      expect(stored.spec.historyLimit, `${name}.spec.historyLimit`).toBe(sample.object.spec.historyLimit ?? 20);
    }
    const collaSet = await custom.getNamespacedCustomObject({ ...GROUP, namespace, plural: "collasets", name: sampleCollaSet.metadata.name ?? "" }) as CollaSet;
    expect(collaSet.spec.updateStrategy?.podUpgradePolicy).toBe("InPlaceIfPossible");
    expect(collaSet.spec.template.spec?.containers[0]?.ports).toEqual([{ containerPort: 8080, name: "http" }]);

    const listed = await kubectl(["get", "pd", "-n", namespace, "-o", "name"]);
    expect(listed.stdout.trim().split("\n").sort()).toEqual(sampleDecorations.filter((pd) => pd.kind === "PodDecoration").map((pd) => `poddecoration.apps.kusionstack.io/${pd.metadata.name ?? ""}`).sort());
    const table = await kubectl(["get", "cls", "-n", namespace]);
    expect(table.stdout.split("\n")[0]?.split(/\s+/)).toEqual(["NAME", "DESIRED", "CURRENT", "UPDATED", "UPDATED_READY", "AVAILABLE", "CURRENT_REVISION", "UPDATED_REVISION", "AGE"]);
  });

  test("a KusionStack manifest is stored unchanged: spec.weight and unknown container fields are kept, defaults filled", async ({ namespace }) => {
    await installCrds();
    const { custom } = clients();
    const manifest = {
      apiVersion: "apps.kusionstack.io/v1alpha1",
      kind: "PodDecoration",
      metadata: { name: "kusion" },
      spec: {
        selector: { matchLabels: { app: "demo" } },
        weight: 10,
        disablePodDetail: true,
        updateStrategy: { rollingUpdate: { partition: 1 } },
        template: {
          metadata: [{ patchPolicy: "Overwrite", labels: { team: "sre" } }],
          containers: [{ name: "probe", image: "registry.k8s.io/pause:3.10", readinessProbe: { tcpSocket: { port: 8080 } } }],
        },
      },
    };
    const stored = await custom.createNamespacedCustomObject({ ...GROUP, namespace, plural: "poddecorations", body: manifest }) as PodDecoration;
    expect(stored.spec.weight).toBe(10);
    expect(stored.spec.disablePodDetail).toBe(true);
    expect(stored.spec.template?.containers?.[0]?.readinessProbe).toEqual({ tcpSocket: { port: 8080 } });
    expect(stored.spec.template?.containers?.[0]?.injectPolicy).toBe("BeforePrimaryContainer");
    expect(stored.spec.historyLimit).toBe(20);
  });

  test("a KusionStack CollaSet applies unchanged through kubectl's strict validation: ReCreate, Replace, namingStrategy", async ({ namespace }) => {
    await installCrds();
    for (const policy of ["ReCreate", "Replace"]) {
      const manifest = `
apiVersion: apps.kusionstack.io/v1alpha1
kind: CollaSet
metadata:
  name: kusion-${policy.toLowerCase()}
  namespace: ${namespace}
spec:
  replicas: 0
  selector:
    matchLabels:
      app: foo
  namingStrategy:
    podNamingSuffixPolicy: PersistentSequence
  updateStrategy:
    podUpgradePolicy: ${policy}
    rollingUpdate:
      byPartition:
        partition: 0
  template:
    metadata:
      labels:
        app: foo
    spec:
      containers:
        - name: nginx
          image: nginx:1.25.2
`;
      const result = await kubectl(["apply", "--validate=strict", "--dry-run=server", "-f", "-"], manifest);
      expect(result.stderr).toBe("");
      expect(result.code).toBe(0);
    }
  });

  test("the CRD schemas reject invalid enums and minimums with the field path", async ({ namespace }) => {
    await installCrds();
    const { custom } = clients();
    const invalid = [
      // Messages arrive JSON-escaped inside the error body: no quotes in these patterns.
      [{ selector: {}, template: { metadata: [{ patchPolicy: "Sometimes" }] } }, /spec\.template\.metadata\[0\]\.patchPolicy: Unsupported value/],
      [{ selector: {}, historyLimit: -1 }, /spec\.historyLimit: Invalid value: -1: .*greater than or equal to 0/],
      [{ selector: {}, updateStrategy: { rollingUpdate: { partition: -1 } } }, /spec\.updateStrategy\.rollingUpdate\.partition/],
      [{ updateStrategy: { newPodRevision: "Sometimes" } }, /spec\.updateStrategy\.newPodRevision: Unsupported value/],
    ] as const;
    for (const [spec, message] of invalid) {
      const body = { apiVersion: "apps.kusionstack.io/v1alpha1", kind: "PodDecoration", metadata: { name: "invalid" }, spec };
      await expect(custom.createNamespacedCustomObject({ ...GROUP, namespace, plural: "poddecorations", body, dryRun: "All" })).rejects.toThrow(message);
    }
  });

  test("for each sample decoration, and for all of them, the rendered pod passes a server-side dry-run create", async ({ namespace }) => {
    expect(sampleDecorations.length).toBeGreaterThan(0);
    await disablePodInjection(namespace);
    const { core } = clients();
    const cases = [...sampleDecorations.map((pd) => [pd.metadata.name ?? "", [pd]] as const), ["all samples", sampleDecorations] as const];
    for (const [what, decorations] of cases) {
      const pod = samplePod(namespace, `rendered-${what.replace(/[^a-z0-9]+/g, "-")}`);
      const placed = decorations.map((pd) => ({ ...pd, metadata: { ...pd.metadata, namespace } }));
      const result = decoratePod(pod, placed, liveRevision);
      expect(result.applied.map((applied) => applied.name).sort(), what).toEqual(decorations.map((pd) => decorationKey(pd)).sort());
      expect(result.warnings, what).toEqual([]);
      const created = await core.createNamespacedPod({ namespace, body: result.pod as never, dryRun: "All" });
      // What the API server would store is what was rendered (it only adds defaults).
      expect(created.spec?.containers.map((container) => container.name), what).toEqual(result.pod.spec?.containers.map((container) => container.name));
      expect(created.metadata?.annotations, what).toMatchObject(result.pod.metadata?.annotations ?? {});
      expect(created.metadata?.labels, what).toEqual(result.pod.metadata?.labels);
    }
  });
});
