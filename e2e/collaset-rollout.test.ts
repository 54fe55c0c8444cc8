// CollaSet and partition-based canary rollouts of decorations on the real control plane, with
// a simulated kubelet so pods become Ready and in-place image changes can be seen finishing.
import type { V1Pod } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect } from "vitest";
import { clients, eventually, kubectl, test } from "./support/cluster.ts";
import { startKubelet, type Kubelet } from "./support/kubelet.ts";
import { apply, collaSetYaml as collaSet, decorationYaml } from "./support/collaset-world.ts";
import { startOperator, type Operator } from "./support/operator.ts";

const INSTANCE_ID = "collaset.kusionstack.io/instance-id";
const REVISIONS = "poddecoration.kusionstack.io/revisions";
const kusion = { group: "apps.kusionstack.io", version: "v1alpha1" };

interface CollaSetStatus {
  observedGeneration?: number;
  replicas?: number;
  availableReplicas?: number;
  updatedReplicas?: number;
  updatedAvailableReplicas?: number;
  currentRevision?: string;
  updatedRevision?: string;
}

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

function decoration(namespace: string, options: { image: string; partition?: number; canary?: string; extraSidecar?: boolean }): string {
  const sidecars = [`log-shipper=${options.image}`, ...(options.extraSidecar === true ? ["metrics=e2e.local/logger:1"] : [])];
  return decorationYaml(namespace, sidecars, { ...(options.partition === undefined ? {} : { partition: options.partition }), ...(options.canary === undefined ? {} : { canary: options.canary }) });
}

async function pods(namespace: string): Promise<V1Pod[]> {
  const list = await clients().core.listNamespacedPod({ namespace, labelSelector: "app=web" });
  return list.items.sort((a, b) => Number(a.metadata!.labels![INSTANCE_ID]) - Number(b.metadata!.labels![INSTANCE_ID]));
}

async function collaSetStatus(namespace: string): Promise<CollaSetStatus & { generation: number }> {
  const object = (await clients().custom.getNamespacedCustomObject({ ...kusion, plural: "collasets", namespace, name: "web" })) as { metadata: { generation: number }; status?: CollaSetStatus };
  return { ...object.status, generation: object.metadata.generation };
}

interface PodView {
  id: string;
  /** The application container's image. */
  image: string;
  uid: string;
  sidecars: string[];
  revisions: string;
}

function view(pod: V1Pod): PodView {
  return {
    id: pod.metadata!.labels![INSTANCE_ID]!,
    image: pod.spec!.containers.find((container) => container.name === "app")?.image ?? "",
    uid: pod.metadata!.uid!,
    sidecars: pod.spec!.containers.filter((container) => container.name !== "app").map((container) => `${container.name}=${container.image ?? ""}`),
    revisions: pod.metadata!.annotations![REVISIONS]!,
  };
}

/** Waits until the CollaSet's pods are settled (all available, no terminating) and `check` holds over them. */
async function settledPods(namespace: string, replicas: number, check: (pods: PodView[]) => boolean, what: string): Promise<PodView[]> {
  return eventually(async () => {
    const list = await pods(namespace);
    if (list.length !== replicas || list.some((pod) => pod.metadata!.deletionTimestamp !== undefined)) return undefined;
    const ready = list.every((pod) => pod.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") === true &&
      pod.spec!.containers.every((container) => pod.status?.containerStatuses?.find((s) => s.name === container.name)?.image === container.image));
    if (!ready) return undefined;
    const views = list.map(view);
    return check(views) ? views : undefined;
  }, 60_000, what);
}

async function table(kind: "pd" | "cls", namespace: string): Promise<string> {
  const result = await kubectl(["get", kind, "-n", namespace, "--no-headers"]);
  expect(result.code).toBe(0);
  return result.stdout.trim().split(/\s+/).join(" ");
}

async function decorationRevision(namespace: string): Promise<string> {
  return eventually(async () => {
    const object = (await clients().custom.getNamespacedCustomObject({ ...kusion, plural: "poddecorations", namespace, name: "logging" })) as { metadata: { generation: number }; status?: { observedGeneration?: number; updatedRevision?: string } };
    return object.status?.observedGeneration === object.metadata.generation ? object.status.updatedRevision : undefined;
  }, 30_000, "the decoration's updated revision");
}

/** Waits until `kubectl get` shows the expected columns (after the name, before the age). */
async function expectTable(kind: "pd" | "cls", namespace: string, columns: string): Promise<void> {
  await eventually(async () => ((await table(kind, namespace)).includes(columns) ? true : undefined), 30_000, `kubectl get ${kind} to show ${columns}`).catch(async (error: unknown) => {
    throw new Error(`${(error as Error).message}; it shows: ${await table(kind, namespace)}`);
  });
}

describe("CollaSet", () => {
  test("scales out and in with stable instance ids, podToDelete first", async ({ namespace }) => {
    await apply(collaSet(namespace, { replicas: 3 }));
    let current = await settledPods(namespace, 3, () => true, "three pods");
    expect(current.map((pod) => pod.id)).toEqual(["0", "1", "2"]);
    await expectTable("cls", namespace, "web 3 3 3 3 3");
    // The CollaSet decided the pod's decorations (none): the revisions annotation says so.
    expect(current.every((pod) => pod.revisions === "[]")).toBe(true);

    await kubectl(["patch", "cls", "web", "-n", namespace, "--type=merge", "-p", '{"spec":{"replicas":5}}']);
    current = await settledPods(namespace, 5, () => true, "five pods");
    expect(current.map((pod) => pod.id)).toEqual(["0", "1", "2", "3", "4"]);

    const victim = (await pods(namespace)).find((pod) => pod.metadata!.labels![INSTANCE_ID] === "1")!.metadata!.name!;
    await kubectl(["patch", "cls", "web", "-n", namespace, "--type=merge", "-p", JSON.stringify({ spec: { replicas: 3, scaleStrategy: { podToDelete: [victim] } } })]);
    current = await settledPods(namespace, 3, () => true, "three pods after scale-in");
    expect(current.map((pod) => pod.id)).toEqual(["0", "2", "3"]);

    // Scaling out again takes the smallest free id.
    await kubectl(["patch", "cls", "web", "-n", namespace, "--type=merge", "-p", '{"spec":{"replicas":4}}']);
    current = await settledPods(namespace, 4, () => true, "four pods");
    expect(current.map((pod) => pod.id)).toEqual(["0", "1", "2", "3"]);
    await expectTable("cls", namespace, "web 4 4 4 4 4");
  });

  test("updates its template in place for an image, by recreation otherwise, within maxUnavailable", async ({ namespace }) => {
    await apply(collaSet(namespace, { replicas: 3 }));
    const before = await settledPods(namespace, 3, () => true, "three pods");
    await apply(collaSet(namespace, { replicas: 3 }).replace("e2e.local/app:1", "e2e.local/app:2"));
    const inPlace = await settledPods(namespace, 3, (list) => list.every((pod) => pod.image === "e2e.local/app:2"), "the new image");
    expect(inPlace.map((pod) => pod.uid)).toEqual(before.map((pod) => pod.uid));

    await apply(collaSet(namespace, { replicas: 3, env: "green" }).replace("e2e.local/app:1", "e2e.local/app:2"));
    const recreated = await settledPods(namespace, 3, (list) => list.every((pod) => !inPlace.some((old) => old.uid === pod.uid)), "recreation");
    expect(recreated.map((pod) => pod.id)).toEqual(["0", "1", "2"]);
    // The controller writes status after it has seen the last pod become available: poll for it.
    const status = await eventually(async () => {
      const current = await collaSetStatus(namespace);
      return current.availableReplicas === 3 ? current : undefined;
    }, 30_000, "the status to count three available pods");
    expect(status).toMatchObject({ replicas: 3, updatedReplicas: 3, availableReplicas: 3, observedGeneration: status.generation });
    expect(status.currentRevision).toBe(status.updatedRevision);
  });
});

describe("decoration rollouts through CollaSet", () => {
  test("partition, in place image change, new sidecar, selector canary, deletion", async ({ namespace }) => {
    await apply(collaSet(namespace, { replicas: 3 }));
    const bare = await settledPods(namespace, 3, () => true, "three pods");

    // partition 2: exactly one pod (instance 0) is decorated, by recreation (a new container).
    await apply(decoration(namespace, { image: "e2e.local/sidecar:1", partition: 2 }));
    const r1 = await decorationRevision(namespace);
    let current = await settledPods(namespace, 3, (list) => list.filter((pod) => pod.sidecars.length > 0).length === 1, "one decorated pod");
    expect(current.map((pod) => pod.sidecars)).toEqual([["log-shipper=e2e.local/sidecar:1"], [], []]);
    expect(current[0]!.uid).not.toBe(bare[0]!.uid);
    expect(current.slice(1).map((pod) => pod.uid)).toEqual(bare.slice(1).map((pod) => pod.uid));
    await expectTable("pd", namespace, "logging 3 1 1 1");
    expect(await table("pd", namespace)).toContain(r1);

    // partition 0: all three.
    await apply(decoration(namespace, { image: "e2e.local/sidecar:1", partition: 0 }));
    current = await settledPods(namespace, 3, (list) => list.every((pod) => pod.sidecars.length === 1), "three decorated pods");
    expect(current.map((pod) => pod.id)).toEqual(["0", "1", "2"]);
    await expectTable("pd", namespace, `logging 3 3 3 3 ${r1} ${r1}`);

    // A sidecar image change goes in place: same pods, new image.
    await apply(decoration(namespace, { image: "e2e.local/sidecar:2" }));
    const r2 = await decorationRevision(namespace);
    const inPlace = await settledPods(namespace, 3, (list) => list.every((pod) => pod.sidecars[0] === "log-shipper=e2e.local/sidecar:2"), "the new sidecar image");
    expect(inPlace.map((pod) => pod.uid)).toEqual(current.map((pod) => pod.uid));
    expect(inPlace.every((pod) => pod.revisions === JSON.stringify([{ name: "logging", revision: r2 }]))).toBe(true);
    await expectTable("pd", namespace, `logging 3 3 3 3 ${r2} ${r2}`);

    // A new sidecar cannot be added to a live pod: recreated, with the same instance ids.
    await apply(decoration(namespace, { image: "e2e.local/sidecar:2", extraSidecar: true }));
    const withMetrics = await settledPods(namespace, 3, (list) => list.every((pod) => pod.sidecars.length === 2), "the second sidecar");
    expect(withMetrics.map((pod) => pod.id)).toEqual(["0", "1", "2"]);
    expect(withMetrics.some((pod) => inPlace.some((old) => old.uid === pod.uid))).toBe(false);

    // Selector canary: only instance 1 moves to v3.
    await apply(decoration(namespace, { image: "e2e.local/sidecar:3", extraSidecar: true, canary: "1" }));
    const r3 = await decorationRevision(namespace);
    const canary = await settledPods(namespace, 3, (list) => list[1]!.sidecars[0] === "log-shipper=e2e.local/sidecar:3", "the canary");
    expect(canary.map((pod) => pod.sidecars[0])).toEqual(["log-shipper=e2e.local/sidecar:2", "log-shipper=e2e.local/sidecar:3", "log-shipper=e2e.local/sidecar:2"]);
    await expectTable("pd", namespace, `logging 3 3 1 1`);
    expect(await table("pd", namespace)).toContain(r3);

    // Deleted: removed from every pod through the same rollout, then the finalizer lets it go.
    await kubectl(["delete", "pd", "logging", "-n", namespace, "--wait=false"]);
    const undecorated = await settledPods(namespace, 3, (list) => list.every((pod) => pod.sidecars.length === 0 && pod.revisions === "[]"), "the decoration to be removed");
    expect(undecorated.map((pod) => pod.id)).toEqual(["0", "1", "2"]);
    await eventually(async () => ((await kubectl(["get", "pd", "-n", namespace, "--no-headers"])).stdout.trim() === "" ? true : undefined), 30_000, "the decoration to be released");
  });

  test("pods held back by a partition stay undecorated when a template change recreates them", async ({ namespace }) => {
    await apply(collaSet(namespace, { replicas: 3 }));
    await settledPods(namespace, 3, () => true, "three pods");
    await apply(decoration(namespace, { image: "e2e.local/sidecar:1", partition: 2 }));
    const held = await settledPods(namespace, 3, (list) => list.filter((pod) => pod.sidecars.length > 0).length === 1, "one decorated pod");

    await apply(collaSet(namespace, { replicas: 3, env: "green" }));
    const recreated = await settledPods(namespace, 3, (list) => list.every((pod) => !held.some((old) => old.uid === pod.uid)), "every pod recreated");
    expect(recreated.map((pod) => pod.sidecars)).toEqual([["log-shipper=e2e.local/sidecar:1"], [], []]);
    expect(recreated.slice(1).every((pod) => pod.revisions === "[]")).toBe(true);
    const env = (await pods(namespace)).map((pod) => pod.spec!.containers.find((container) => container.name === "app")!.env![0]!.value);
    expect(env).toEqual(["green", "green", "green"]);
  });

  test("a controller killed mid-rollout finishes it after a restart, with no duplicate pods", async ({ namespace }) => {
    await apply(collaSet(namespace, { replicas: 6, maxUnavailable: 2 }));
    await settledPods(namespace, 6, () => true, "six pods");
    await apply(decoration(namespace, { image: "e2e.local/sidecar:1" }));
    await eventually(async () => ((await pods(namespace)).some((pod) => pod.spec!.containers.length === 2) ? true : undefined), 30_000, "the rollout to start");
    await operator.kill("SIGKILL");
    operator = await startOperator();
    const done = await settledPods(namespace, 6, (list) => list.every((pod) => pod.sidecars.length === 1), "the rollout to finish");
    expect(done.map((pod) => pod.id)).toEqual(["0", "1", "2", "3", "4", "5"]);
    // Nothing left behind: no terminating pod held by a finalizer, no extra pod.
    expect((await clients().core.listNamespacedPod({ namespace })).items).toHaveLength(6);
  });
});
