// ClusterPodDecoration (issue 38, DESIGN §12) on the real control plane, the API server calling the
// webhook over HTTPS, a simulated kubelet for the CollaSet's pods: one order across kinds and two
// decorations of one name kept apart, revisions in the release namespace with their history
// limit, status over the fleet, namespaces labelled in and out, the namespace canary, deletion
// taking it off CollaSet pods before its finalizer goes, `explain` for both kinds, and what a
// namespace's own users cannot do to it.
// Each test selects its namespaces by a label of its own, so that no cluster decoration of one
// test reaches another test's pods.
import type { V1ControllerRevision, V1Pod } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect } from "vitest";
import type { DecorationReport } from "../src/cli/live-explanation.ts";
import { parse } from "yaml";
import { clients, eventually, kubectl, test } from "./support/cluster.ts";
import { apply, collaSetPods, collaSetYaml, sidecarsOf } from "./support/collaset-world.ts";
import { explain, explainPodJson, verdict } from "./support/explain-cli.ts";
import { serviceAccountIdentity } from "./support/identities.ts";
import { startKubelet, type Kubelet } from "./support/kubelet.ts";
import { OPERATOR_NAMESPACE, startOperator, type Operator } from "./support/operator.ts";

const OWN = { group: "pod-decorator.io", version: "v1alpha1", plural: "clusterpoddecorations" };
const FLEET_LABEL = "e2e.pod-decorator.io/fleet";
const CLUSTER_REVISIONS = "pod-decorator.io/cluster-revisions";
const REVISIONS = "poddecoration.kusionstack.io/revisions";
const OWNER_LABEL = "pod-decorator.io/cluster-poddecoration";

let operator: Operator;
let kubelet: Kubelet;
beforeAll(async () => {
  operator = await startOperator();
  kubelet = await startKubelet();
});
afterAll(async () => {
  await kubelet.stop();
  expect(await operator.stop()).toBe(0);
});

interface ClusterDecorationObject {
  metadata: { name: string; generation: number; finalizers?: string[]; deletionTimestamp?: string };
  status?: {
    observedGeneration?: number;
    matchedPods?: number;
    injectedPods?: number;
    updatedPods?: number;
    updatedRevision?: string;
    currentRevision?: string;
    selectedNamespaces?: number;
    namespaces?: { name: string; matchedPods: number; updatedPods: number; keptPods?: number }[];
    conditions?: { type: string; status: string; reason?: string; message?: string }[];
  };
}

function clusterDecoration(name: string, fleet: string, spec: Record<string, unknown>): object {
  return { apiVersion: "pod-decorator.io/v1alpha1", kind: "ClusterPodDecoration", metadata: { name }, spec: { namespaceSelector: { matchLabels: { [FLEET_LABEL]: fleet } }, selector: {}, ...spec } };
}

function podDecoration(namespace: string, name: string, spec: Record<string, unknown>): object {
  return { apiVersion: "apps.kusionstack.io/v1alpha1", kind: "PodDecoration", metadata: { name, namespace }, spec: { selector: {}, ...spec } };
}

const sidecar = (name: string, image: string) => ({ containers: [{ name, image }] });

async function create(objects: readonly object[], kubeconfig?: string) {
  return kubectl(["create", ...(kubeconfig === undefined ? [] : [`--kubeconfig=${kubeconfig}`]), "-f", "-"], JSON.stringify({ apiVersion: "v1", kind: "List", items: objects }));
}

async function applyObjects(objects: readonly object[]): Promise<void> {
  const result = await kubectl(["apply", "-f", "-"], JSON.stringify({ apiVersion: "v1", kind: "List", items: objects }));
  expect(result.stderr).toBe("");
}

async function readClusterDecoration(name: string): Promise<ClusterDecorationObject> {
  return (await clients().custom.getClusterCustomObject({ ...OWN, name })) as ClusterDecorationObject;
}

/** Waits until the controller observed the latest generation and `check` holds. */
function settledCluster(name: string, check: (cpd: ClusterDecorationObject) => boolean, what: string, timeoutMs = 60_000): Promise<ClusterDecorationObject> {
  return eventually(async () => {
    const cpd = await readClusterDecoration(name);
    return cpd.status?.observedGeneration === cpd.metadata.generation && check(cpd) ? cpd : undefined;
  }, timeoutMs, what);
}

async function deleteClusterDecorations(...names: string[]): Promise<void> {
  if (names.length > 0) await kubectl(["delete", "clusterpoddecorations.pod-decorator.io", ...names, "--ignore-not-found", "--wait=false"]);
}

async function labelNamespace(namespace: string, labels: Record<string, string | null>): Promise<void> {
  const args = Object.entries(labels).map(([key, value]) => (value === null ? `${key}-` : `${key}=${value}`));
  const result = await kubectl(["label", "namespace", namespace, ...args, "--overwrite"]);
  expect(result.code, result.stderr).toBe(0);
}

async function createNamespace(name: string, labels: Record<string, string>): Promise<void> {
  await clients().core.createNamespace({ body: { metadata: { name, labels } } });
}

async function createPod(namespace: string, name: string, labels: Record<string, string> = { app: "web" }, annotations: Record<string, string> = {}): Promise<V1Pod> {
  return clients().core.createNamespacedPod({ namespace, body: { metadata: { name, labels, annotations }, spec: { containers: [{ name: "app", image: "e2e.local/app:1" }] } } });
}

async function dryRunPod(namespace: string, labels: Record<string, string> = { app: "web" }): Promise<V1Pod> {
  return clients().core.createNamespacedPod({ namespace, dryRun: "All", body: { metadata: { generateName: "web-", labels }, spec: { containers: [{ name: "app", image: "e2e.local/app:1" }] } } });
}

const containerNames = (pod: V1Pod) => pod.spec!.containers.map((container) => container.name);

/** Waits until the webhook's caches render `container` into a new pod of the namespace (or stop rendering it). */
function webhookRenders(namespace: string, container: string, present = true): Promise<true> {
  return eventually(async () => (containerNames(await dryRunPod(namespace)).includes(container) === present ? true : undefined), 30_000, `the webhook to ${present ? "render" : "stop rendering"} ${container} in ${namespace}`);
}

async function clusterRevisions(name: string): Promise<V1ControllerRevision[]> {
  return (await clients().apps.listNamespacedControllerRevision({ namespace: OPERATOR_NAMESPACE, labelSelector: `${OWNER_LABEL}=${name}` })).items.sort((a, b) => (a.revision ?? 0) - (b.revision ?? 0));
}

const recorded = (pod: V1Pod, annotation: string) => JSON.parse(pod.metadata?.annotations?.[annotation] ?? "[]") as { name: string; revision: string }[];

describe("ClusterPodDecorations with a namespace's PodDecorations", () => {
  test("render in one order, a ClusterPodDecoration and a PodDecoration of one name are two, revisions and status over the fleet", async ({ namespace }) => {
    await labelNamespace(namespace, { [FLEET_LABEL]: namespace });
    const logging = `${namespace}-logging`.slice(0, 63);
    try {
      expect((await create([
        podDecoration(namespace, "mesh", { injectStrategy: { weight: 10 }, template: sidecar("shop-proxy", "e2e.local/proxy:1") }),
        podDecoration(namespace, "logging", { injectStrategy: { group: "logging", weight: 1 }, template: sidecar("shop-logging", "e2e.local/logger:1") }),
        clusterDecoration("mesh", namespace, { injectStrategy: { weight: 10 }, template: sidecar("fleet-proxy", "e2e.local/proxy:1") }),
        clusterDecoration(logging, namespace, { injectStrategy: { group: "logging", weight: 50 }, template: sidecar("fleet-logging", "e2e.local/logger:1") }),
      ])).code).toBe(0);
      await webhookRenders(namespace, "fleet-logging");
      await webhookRenders(namespace, "fleet-proxy");

      const pod = await createPod(namespace, "web-0");
      // Ungrouped first, then by weight; on a full tie (mesh, weight 10, same second) the namespaced one first.
      expect(containerNames(pod)).toEqual(["shop-proxy", "fleet-proxy", "fleet-logging", "app"]);
      const mesh = await settledCluster("mesh", (cpd) => cpd.status?.updatedPods === 1, "mesh's status to count the pod");
      const fleetLogging = await settledCluster(logging, (cpd) => cpd.status?.updatedPods === 1, "the logging decoration's status to count the pod");
      expect(recorded(pod, CLUSTER_REVISIONS)).toEqual([{ name: logging, revision: fleetLogging.status!.updatedRevision }, { name: "mesh", revision: mesh.status!.updatedRevision }].sort((a, b) => a.name.localeCompare(b.name)));
      // The namespaced record keeps kuperator's format and names only namespaced decorations.
      expect(recorded(pod, REVISIONS).map((entry) => entry.name)).toEqual(["mesh"]);
      expect(pod.metadata?.labels).toMatchObject({ "pod-decorator.io/cpd-mesh": mesh.status!.updatedRevision });

      // Revisions in the release namespace, owned by the cluster decoration, named cpd-<name>-<hash>.
      const [revision] = await clusterRevisions("mesh");
      expect(revision?.metadata?.name).toBe(mesh.status!.updatedRevision);
      expect(revision?.metadata?.name).toMatch(/^cpd-mesh-[a-z0-9]+$/);
      expect(revision?.metadata?.ownerReferences?.[0]).toMatchObject({ apiVersion: "pod-decorator.io/v1alpha1", kind: "ClusterPodDecoration", name: "mesh", controller: true });
      expect(mesh.status).toMatchObject({ matchedPods: 1, injectedPods: 1, updatedPods: 1, selectedNamespaces: 1, namespaces: [{ name: namespace, matchedPods: 1, updatedPods: 1 }] });
      expect(mesh.metadata.finalizers).toContain("poddecoration.kusionstack.io/protection");

      // explain tells the two meshes apart, for the pod and for the cluster decoration.
      const report = await explainPodJson(namespace, "web-0");
      expect(verdict(report, "mesh")).toMatchObject({ state: "updated" });
      expect(verdict(report, "ClusterPodDecoration/mesh")).toMatchObject({ state: "updated", podRevision: mesh.status!.updatedRevision });
      expect(verdict(report, "logging")).toMatchObject({ state: "excluded", reasons: [{ reason: "group" }] });
      const fleet = parse((await explain(["cpd", "mesh", "-o", "yaml"])).stdout) as DecorationReport;
      expect(fleet.decoration).toMatchObject({ name: "mesh", clusterScoped: true, namespaces: [namespace], updatedRevision: mesh.status!.updatedRevision });
      expect(fleet.pods.updated?.map((entry) => entry.pod)).toEqual([`${namespace}/web-0`]);
      const text = (await explain(["clusterpoddecoration/mesh"])).stdout;
      expect(text).toContain(`ClusterPodDecoration:  mesh\n`);
      expect(text).toContain(`    ${namespace}/web-0  has ${mesh.status!.updatedRevision}, should have ${mesh.status!.updatedRevision}\n`);
    } finally {
      await deleteClusterDecorations("mesh", logging);
    }
  });

  test("keeps its history limit in the release namespace, the revision a pod records kept in use", async ({ namespace }) => {
    await labelNamespace(namespace, { [FLEET_LABEL]: namespace });
    const name = `${namespace}-history`.slice(0, 63);
    const held = { updateStrategy: { rollingUpdate: { partition: 1 } }, historyLimit: 2 };
    try {
      await applyObjects([clusterDecoration(name, namespace, { ...held, template: sidecar("logger", "e2e.local/logger:1") })]);
      const first = await settledCluster(name, (cpd) => cpd.status?.updatedRevision !== undefined, "the first revision");
      await webhookRenders(namespace, "logger");
      await createPod(namespace, "bare");
      for (const tag of ["2", "3", "4", "5"]) await applyObjects([clusterDecoration(name, namespace, { ...held, template: sidecar("logger", `e2e.local/logger:${tag}`) })]);
      const last = await settledCluster(name, (cpd) => cpd.status?.updatedRevision !== first.status?.updatedRevision && cpd.status?.matchedPods === 1, "the fifth revision");
      await eventually(async () => ((await clusterRevisions(name)).length === 2 ? true : undefined), 30_000, "history pruned to 2");
      expect((await clusterRevisions(name)).map((revision) => revision.metadata!.name)).toEqual([first.status!.updatedRevision, last.status!.updatedRevision]);
      // The partition holds the one pod on what it records.
      expect(last.status).toMatchObject({ matchedPods: 1, injectedPods: 1, updatedPods: 0, currentRevision: first.status!.updatedRevision });
    } finally {
      await deleteClusterDecorations(name);
    }
  });
});

describe("namespaces labelled in and out", () => {
  test("a namespace labelled in gets it for new pods, its older pods reported; labelled out, new pods go without and older ones keep it", async ({ namespace }) => {
    const name = `${namespace}-fleet`.slice(0, 63);
    try {
      await applyObjects([clusterDecoration(name, namespace, { template: sidecar("fleet-logger", "e2e.local/logger:1") })]);
      await settledCluster(name, (cpd) => cpd.status?.updatedRevision !== undefined, "the first revision");
      // Not labelled yet: nothing.
      const before = await createPod(namespace, "before");
      expect(containerNames(before)).toEqual(["app"]);

      await labelNamespace(namespace, { [FLEET_LABEL]: namespace });
      await webhookRenders(namespace, "fleet-logger");
      const after = await createPod(namespace, "after");
      expect(containerNames(after)).toEqual(["fleet-logger", "app"]);
      // The older pod matches now and is counted, not updated (adding a container needs its recreation).
      const labelledIn = await settledCluster(name, (cpd) => cpd.status?.matchedPods === 2 && cpd.status.updatedPods === 1, "both pods counted, one updated");
      expect(labelledIn.status?.namespaces).toEqual([{ name: namespace, matchedPods: 2, updatedPods: 1 }]);
      const missing = verdict(await explainPodJson(namespace, "before"), `ClusterPodDecoration/${name}`);
      expect(missing).toMatchObject({ state: "missing", reasons: [{ reason: "not-admitted-by-webhook" }, { reason: "needs-recreation" }] });
      expect(missing.reasons[0]?.detail).toContain("its namespace was not selected when the pod was created");

      await labelNamespace(namespace, { [FLEET_LABEL]: null });
      await webhookRenders(namespace, "fleet-logger", false);
      const outside = await createPod(namespace, "outside");
      expect(containerNames(outside)).toEqual(["app"]);
      // The pod that has it keeps it, reported as kept; no longer matched.
      const labelledOut = await settledCluster(name, (cpd) => cpd.status?.matchedPods === 0 && cpd.status.namespaces?.[0]?.keptPods === 1, "the kept pod reported");
      expect(labelledOut.status).toMatchObject({ selectedNamespaces: 0, namespaces: [{ name: namespace, matchedPods: 0, updatedPods: 0, keptPods: 1 }] });
      const kept = await clients().core.readNamespacedPod({ namespace, name: "after" });
      expect(containerNames(kept)).toEqual(["fleet-logger", "app"]);
      expect(recorded(kept, CLUSTER_REVISIONS).map((entry) => entry.name)).toEqual([name]);
    } finally {
      await deleteClusterDecorations(name);
    }
  });

  test("an image change rolls out as a namespace canary: staging first, the rest once the canary is lifted", async ({ namespace }) => {
    const staging = `${namespace}-staging`.slice(0, 63);
    const name = `${namespace}-canary`.slice(0, 63);
    const canary = { updateStrategy: { rollingUpdate: { namespaceSelector: { matchLabels: { stage: "staging" } } } } };
    await createNamespace(staging, { [FLEET_LABEL]: namespace, stage: "staging" });
    try {
      await labelNamespace(namespace, { [FLEET_LABEL]: namespace });
      await applyObjects([clusterDecoration(name, namespace, { template: sidecar("fleet-logger", "e2e.local/logger:1") })]);
      await webhookRenders(namespace, "fleet-logger");
      await webhookRenders(staging, "fleet-logger");
      await createPod(namespace, "prod-0");
      await createPod(staging, "staging-0");
      const first = await settledCluster(name, (cpd) => cpd.status?.updatedPods === 2, "both pods on the first revision");

      await applyObjects([clusterDecoration(name, namespace, { ...canary, template: sidecar("fleet-logger", "e2e.local/logger:2") })]);
      const image = async (ns: string, pod: string) => (await clients().core.readNamespacedPod({ namespace: ns, name: pod })).spec!.containers.find((container) => container.name === "fleet-logger")?.image;
      await eventually(async () => ((await image(staging, "staging-0")) === "e2e.local/logger:2" ? true : undefined), 60_000, "the staging pod updated in place");
      const canaried = await settledCluster(name, (cpd) => cpd.status?.updatedPods === 1 && cpd.status.updatedRevision !== first.status?.updatedRevision, "the canary counted");
      expect(await image(namespace, "prod-0")).toBe("e2e.local/logger:1");
      expect(canaried.status?.namespaces).toEqual([{ name: namespace, matchedPods: 1, updatedPods: 0 }, { name: staging, matchedPods: 1, updatedPods: 1 }]);
      // The same pod, updated in place: its uid did not change.
      const stagingPod = await clients().core.readNamespacedPod({ namespace: staging, name: "staging-0" });
      expect(recorded(stagingPod, CLUSTER_REVISIONS)).toEqual([{ name, revision: canaried.status!.updatedRevision }]);
      const held = parse((await explain(["cpd", name, "-o", "yaml"])).stdout) as DecorationReport;
      expect(held.pods.held?.map((entry) => [entry.pod, entry.reasons[0]?.reason])).toEqual([[`${namespace}/prod-0`, "canary-selector"]]);

      // Checked: lift the canary, the rest moves.
      await applyObjects([clusterDecoration(name, namespace, { template: sidecar("fleet-logger", "e2e.local/logger:2") })]);
      await eventually(async () => ((await image(namespace, "prod-0")) === "e2e.local/logger:2" ? true : undefined), 60_000, "the production pod updated in place");
      await settledCluster(name, (cpd) => cpd.status?.updatedPods === 2 && cpd.status.currentRevision === cpd.status.updatedRevision, "every pod on the updated revision");
    } finally {
      await deleteClusterDecorations(name);
      await kubectl(["delete", "namespace", staging, "--wait=false"]);
    }
  });
});

describe("deleting a ClusterPodDecoration", () => {
  test("takes it off a CollaSet's pods, then releases its finalizer", async ({ namespace }) => {
    await labelNamespace(namespace, { [FLEET_LABEL]: namespace });
    const name = `${namespace}-gone`.slice(0, 63);
    await applyObjects([clusterDecoration(name, namespace, { selector: { matchLabels: { app: "web" } }, template: sidecar("fleet-logger", "e2e.local/logger:1") })]);
    await webhookRenders(namespace, "fleet-logger");
    await apply(collaSetYaml(namespace, { replicas: 2 }));
    await eventually(async () => {
      const pods = await collaSetPods(namespace);
      return pods.length === 2 && pods.every((pod) => sidecarsOf(pod).includes("fleet-logger=e2e.local/logger:1")) ? true : undefined;
    }, 60_000, "the CollaSet's pods with the sidecar");
    await settledCluster(name, (cpd) => cpd.status?.updatedPods === 2, "both pods counted");

    expect((await kubectl(["delete", "clusterpoddecorations.pod-decorator.io", name, "--wait=false"])).code).toBe(0);
    // While pods record it, the finalizer holds it.
    const deleting = await readClusterDecoration(name);
    expect(deleting.metadata.deletionTimestamp).toBeDefined();
    await eventually(async () => {
      const pods = await collaSetPods(namespace);
      return pods.length === 2 && pods.every((pod) => pod.metadata?.deletionTimestamp == null && sidecarsOf(pod).length === 0 && recorded(pod as V1Pod, CLUSTER_REVISIONS).length === 0) ? true : undefined;
    }, 90_000, "the CollaSet's pods without the sidecar");
    await eventually(async () => {
      try {
        await readClusterDecoration(name);
        return undefined;
      } catch {
        return true;
      }
    }, 30_000, "the cluster decoration gone once no pod records it");
    expect(await clusterRevisions(name)).toEqual([]);
  });
});

describe("what a namespace's own users cannot do to a ClusterPodDecoration", () => {
  const EVERYTHING_IN_THE_NAMESPACE = [{ apiGroups: ["*"], resources: ["*"], verbs: ["*"] }];

  test("delete it, out-rank it, skip it by forging its record, or write one without creating pods everywhere", async ({ namespace }) => {
    await labelNamespace(namespace, { [FLEET_LABEL]: namespace });
    const name = `${namespace}-proxy`.slice(0, 63);
    try {
      await applyObjects([clusterDecoration(name, namespace, { injectStrategy: { group: "proxy", weight: 10 }, template: sidecar("mesh-proxy", "e2e.local/proxy:1") })]);
      await webhookRenders(namespace, "mesh-proxy");
      const admin = await serviceAccountIdentity(namespace, "namespace-admin", EVERYTHING_IN_THE_NAMESPACE);

      const deleted = await kubectl(["delete", `--kubeconfig=${admin.kubeconfigPath}`, "clusterpoddecorations.pod-decorator.io", name]);
      expect(deleted.code).not.toBe(0);
      expect(deleted.stderr).toContain("forbidden");

      // Out-ranking: a heavier member of its group, or a decoration relabelling its pods out of its selector.
      const heavier = await create([podDecoration(namespace, "my-proxy", { injectStrategy: { group: "proxy", weight: 100 }, template: sidecar("not-the-mesh", "e2e.local/proxy:1") })], admin.kubeconfigPath);
      expect(heavier.code).not.toBe(0);
      expect(heavier.stderr).toContain(`requires update on it, and ${admin.username} may not update ClusterPodDecoration/${name}`);

      // Two of the namespace's own together: one relabels backend pods as frontend, the other
      // injects its own proxy into frontend pods, heavier in the cluster decoration's group.
      const backendOnly = `${name}-backend`.slice(0, 63);
      await applyObjects([clusterDecoration(backendOnly, namespace, { selector: { matchLabels: { tier: "backend" } }, injectStrategy: { group: "backend-proxy", weight: 10 }, template: sidecar("backend-proxy", "e2e.local/proxy:1") })]);
      const backendProxy = async () => (await clients().core.createNamespacedPod({ namespace, dryRun: "All", body: { metadata: { name: "backend", labels: { app: "web", tier: "backend" } }, spec: { containers: [{ name: "app", image: "e2e.local/app:1" }] } } })).spec!.containers.find((container) => container.name === "backend-proxy")?.image;
      try {
        await eventually(async () => ((await backendProxy()) === "e2e.local/proxy:1" ? true : undefined), 30_000, "the webhook to render backend-proxy into backend pods");
        const chain = await create([
          podDecoration(namespace, "app-relabel", { selector: { matchLabels: { tier: "backend" } }, template: { metadata: [{ patchPolicy: "Overwrite", labels: { tier: "frontend" } }] } }),
          podDecoration(namespace, "zz-takeover", { selector: { matchLabels: { tier: "frontend" } }, injectStrategy: { group: "backend-proxy", weight: 100 }, template: sidecar("backend-proxy", "e2e.local/proxy:2") }),
        ], admin.kubeconfigPath);
        expect(chain.code).not.toBe(0);
        expect(chain.stderr).toContain(`may not update ClusterPodDecoration/${backendOnly}`);
        expect(await backendProxy()).toBe("e2e.local/proxy:1");
      } finally {
        await deleteClusterDecorations(backendOnly);
      }

      // Skipping: a pod that claims to record it already still gets it.
      const revision = (await settledCluster(name, (cpd) => cpd.status?.updatedRevision !== undefined, "its revision")).status!.updatedRevision!;
      const forged = await admin.core.createNamespacedPod({
        namespace,
        body: {
          metadata: { name: "forged", labels: { app: "web" }, annotations: { [CLUSTER_REVISIONS]: JSON.stringify([{ name, revision }]) } },
          spec: { containers: [{ name: "app", image: "e2e.local/app:1" }] },
        },
      });
      expect(containerNames(forged)).toEqual(["mesh-proxy", "app"]);

      // Writing one needs create on pods in every namespace: a ClusterRole for the kind is not enough.
      const writer = await serviceAccountIdentity(namespace, "cluster-writer", EVERYTHING_IN_THE_NAMESPACE);
      const grant = { apiVersion: "rbac.authorization.k8s.io/v1", kind: "ClusterRole", metadata: { name: `${namespace}-cpd-writer` }, rules: [{ apiGroups: ["pod-decorator.io"], resources: ["clusterpoddecorations"], verbs: ["create", "get", "list"] }] };
      const binding = { apiVersion: "rbac.authorization.k8s.io/v1", kind: "ClusterRoleBinding", metadata: { name: `${namespace}-cpd-writer` }, roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: `${namespace}-cpd-writer` }, subjects: [{ kind: "ServiceAccount", name: "cluster-writer", namespace }] };
      await applyObjects([grant, binding]);
      try {
        const written = await create([clusterDecoration(`${namespace}-mine`.slice(0, 63), namespace, { template: sidecar("mine", "e2e.local/logger:1") })], writer.kubeconfigPath);
        expect(written.code).not.toBe(0);
        expect(written.stderr).toContain(`${writer.username} may not create pods in every namespace`);
      } finally {
        await kubectl(["delete", "clusterrolebinding,clusterrole", `${namespace}-cpd-writer`, "--ignore-not-found"]);
      }
    } finally {
      await deleteClusterDecorations(name);
    }
  });
});
