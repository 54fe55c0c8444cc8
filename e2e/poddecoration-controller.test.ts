// The PodDecoration controller on the real control plane: revision history, status, template
// validation by server-side dry run, the finalizer, and leader failover between two processes.
import { CoordinationV1Api, type V1ControllerRevision } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect } from "vitest";
import { clients, eventually, kubectl, test } from "./support/cluster.ts";
import { OPERATOR_NAMESPACE, startOperator, type Operator } from "./support/operator.ts";
import { queueIdle } from "./support/queue-metrics.ts";

const group = { group: "apps.kusionstack.io", version: "v1alpha1", plural: "poddecorations" };

interface DecorationStatus {
  matchedPods?: number;
  injectedPods?: number;
  updatedPods?: number;
  currentRevision?: string;
  updatedRevision?: string;
  details?: { collaSet: string; affectedReplicas: number; pods?: { name: string; revision?: string; escaped?: boolean }[] }[];
  conditions?: { type: string; status: string; reason?: string; message?: string }[];
}
interface Decoration {
  metadata: { name: string; finalizers?: string[]; generation: number; uid: string };
  status?: DecorationStatus;
}

function manifest(namespace: string, name: string, image: string, extra = ""): string {
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
  historyLimit: 2
  template:
    containers:
      - name: ${name}-sidecar
        image: ${image}
${extra}`;
}

async function apply(yaml: string): Promise<void> {
  const result = await kubectl(["apply", "-f", "-"], yaml);
  expect(result.stderr).toBe("");
}

async function decoration(namespace: string, name: string): Promise<Decoration> {
  return (await clients().custom.getNamespacedCustomObject({ ...group, namespace, name })) as Decoration;
}

async function revisions(namespace: string): Promise<V1ControllerRevision[]> {
  // The decorations' revisions only: CollaSets keep theirs in the same namespace.
  return (await clients().apps.listNamespacedControllerRevision({ namespace, labelSelector: "poddecoration.kusionstack.io/name" })).items.sort((a, b) => (a.revision ?? 0) - (b.revision ?? 0));
}

/** Waits until the controller has observed the latest generation and the check holds. */
function settled(namespace: string, name: string, check: (decoration: Decoration) => boolean, what: string): Promise<Decoration> {
  return eventually(async () => {
    const current = await decoration(namespace, name);
    const observed = (current.status as { observedGeneration?: number } | undefined)?.observedGeneration === current.metadata.generation;
    return observed && check(current) ? current : undefined;
  }, 30_000, what);
}

async function createPod(namespace: string, name: string, owner?: { kind: string; name: string; uid: string; apiVersion: string }): Promise<void> {
  await clients().core.createNamespacedPod({
    namespace,
    body: {
      metadata: { name, labels: { app: "web" }, ...(owner === undefined ? {} : { ownerReferences: [{ ...owner, controller: true }] }) },
      spec: { containers: [{ name: "app", image: "nginx:1.27" }] },
    },
  });
}

/** A CollaSet that makes no pods of its own: the test creates pods it owns by hand. */
async function pausedCollaSet(namespace: string): Promise<{ metadata: { uid: string } }> {
  return (await clients().custom.createNamespacedCustomObject({
    group: "apps.kusionstack.io",
    version: "v1alpha1",
    namespace,
    plural: "collasets",
    body: {
      apiVersion: "apps.kusionstack.io/v1alpha1",
      kind: "CollaSet",
      metadata: { name: "web" },
      spec: { replicas: 0, paused: true, selector: { matchLabels: { app: "web" } }, template: { metadata: { labels: { app: "web" } }, spec: { containers: [{ name: "app", image: "nginx:1.27" }] } } },
    },
  })) as { metadata: { uid: string } };
}

let operator: Operator;
beforeAll(async () => {
  operator = await startOperator();
});
afterAll(async () => {
  expect(await operator.stop()).toBe(0);
});

describe("the PodDecoration controller", () => {
  test("keeps exactly the revisions the rules demand across edits, reuse and roll back", async ({ namespace }) => {
    // The partition holds the one pod on what it records, so that revision stays in use.
    const held = "  updateStrategy:\n    rollingUpdate:\n      partition: 1\n";
    await apply(manifest(namespace, "logging", "fluent-bit:v1", held));
    const first = await settled(namespace, "logging", (pd) => pd.status?.updatedRevision !== undefined, "the first revision");
    const v1 = first.status!.updatedRevision!;
    expect(first.metadata.finalizers).toContain("poddecoration.kusionstack.io/protection");
    // A pod created now records v1 and keeps it in use.
    await createPod(namespace, "bare");

    for (const version of ["v2", "v3", "v4", "v5", "v6"]) await apply(manifest(namespace, "logging", `fluent-bit:${version}`, held));
    const edited = await settled(namespace, "logging", (pd) => pd.status?.updatedRevision !== v1, "the sixth revision");
    const v6 = edited.status!.updatedRevision!;
    await eventually(async () => ((await revisions(namespace)).length === 2 ? true : undefined), 30_000, "history to be pruned to 2");
    // historyLimit 2: the updated revision and the one the pod still records (also current).
    expect((await revisions(namespace)).map((revision) => revision.metadata!.name)).toEqual([v1, v6]);
    expect(edited.status).toMatchObject({ currentRevision: v1, updatedRevision: v6, matchedPods: 1, injectedPods: 1, updatedPods: 0 });

    // A change outside the template and inject strategy is the same revision.
    await kubectl(["patch", "pd", "logging", "-n", namespace, "--type=merge", "-p", '{"spec":{"disablePodDetail":true}}']);
    await settled(namespace, "logging", (pd) => pd.metadata.generation > edited.metadata.generation && pd.status?.updatedRevision === v6, "reuse of v6");
    expect((await revisions(namespace)).map((revision) => revision.metadata!.name)).toEqual([v1, v6]);

    // Back to v1: the old revision is rolled back to, keeping its name, with the next number.
    await apply(manifest(namespace, "logging", "fluent-bit:v1", held));
    const rolledBack = await settled(namespace, "logging", (pd) => pd.status?.updatedRevision === v1, "roll back to v1");
    const history = await revisions(namespace);
    expect(history.map((revision) => revision.metadata!.name)).toEqual([v6, v1]);
    expect(history.at(-1)!.revision).toBeGreaterThan(history[0]!.revision);
    // Every matched pod is on the updated revision again: it is current.
    expect(rolledBack.status).toMatchObject({ currentRevision: v1, updatedRevision: v1, updatedPods: 1 });

    const table = await kubectl(["get", "pd", "logging", "-n", namespace]);
    expect(table.stdout).toMatch(new RegExp(`logging\\s+1\\s+1\\s+1\\s+0\\s+${v1}\\s+${v1}`));
  });

  test("counts CollaSet, Deployment-style and bare pods, with per-CollaSet details", async ({ namespace }) => {
    const { core } = clients();
    const collaSet = await pausedCollaSet(namespace);
    await apply(manifest(namespace, "logging", "fluent-bit:v1"));
    const decorated = await settled(namespace, "logging", (pd) => pd.status?.updatedRevision !== undefined, "the first revision");
    const revision = decorated.status!.updatedRevision!;
    const owner = { apiVersion: "apps.kusionstack.io/v1alpha1", kind: "CollaSet", name: "web", uid: collaSet.metadata.uid };
    await createPod(namespace, "web-0", owner);
    await createPod(namespace, "web-1", owner);
    await createPod(namespace, "bare");
    await core.createNamespacedPod({
      namespace,
      body: { metadata: { generateName: "api-6d5f-", labels: { app: "web", "pod-template-hash": "6d5f" } }, spec: { containers: [{ name: "app", image: "api:1" }] } },
    });
    // Not selected: counts nothing.
    await core.createNamespacedPod({ namespace, body: { metadata: { name: "db", labels: { app: "db" } }, spec: { containers: [{ name: "db", image: "db:1" }] } } });

    const status = (await settled(namespace, "logging", (pd) => pd.status?.matchedPods === 4, "four matched pods")).status!;
    expect(status).toMatchObject({ matchedPods: 4, injectedPods: 4, updatedPods: 4, currentRevision: revision });
    expect(status.details).toEqual([{ collaSet: "web", affectedReplicas: 2, pods: [{ name: "web-0", revision }, { name: "web-1", revision }] }]);
  });

  test("reports TemplateValid=False with the API server's message for a volume source admission does not check", async ({ namespace }) => {
    // Admission checks the common volume sources (and warns about the others); an iscsi volume
    // without a target portal passes it, and the server-side dry run of a rendered sample is
    // what catches it.
    const result = await kubectl(["apply", "-f", "-"], manifest(namespace, "broken", "fluent-bit:v1", "        volumeMounts:\n          - name: data\n            mountPath: /data\n    volumes:\n      - name: data\n        iscsi:\n          iqn: iqn.2001-04.com.example:storage\n"));
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toContain("Warning: spec.template.volumes[0].iscsi: the rules of this volume source are not checked at admission");
    const broken = await settled(namespace, "broken", (pd) => pd.status?.conditions?.some((c) => c.type === "TemplateValid") === true, "template validation");
    const condition = broken.status!.conditions!.find((c) => c.type === "TemplateValid")!;
    expect(condition.status).toBe("False");
    expect(condition.message).toMatch(/spec\.volumes\[\d\]\.iscsi\.targetPortal: Required value/);
    expect(broken.status!.conditions!.find((c) => c.type === "Ready")).toMatchObject({ status: "False", reason: "TemplateInvalid" });
    const events = await eventually(async () => {
      const list = await clients().core.listNamespacedEvent({ namespace, fieldSelector: "involvedObject.name=broken,reason=TemplateInvalid" });
      return list.items.length > 0 ? list.items : undefined;
    }, 15_000, "a TemplateInvalid event");
    expect(events[0]!.type).toBe("Warning");
    expect(events[0]!.message).toMatch(/iscsi\.targetPortal: Required value/);
  });

  test("holds a deleted decoration until no CollaSet pod carries it, then its revisions go", async ({ namespace }) => {
    const { custom, core } = clients();
    const collaSet = await pausedCollaSet(namespace);
    await apply(manifest(namespace, "logging", "fluent-bit:v1"));
    await settled(namespace, "logging", (pd) => pd.metadata.finalizers?.includes("poddecoration.kusionstack.io/protection") === true && pd.status?.updatedRevision !== undefined, "the finalizer");
    await createPod(namespace, "web-0", { apiVersion: "apps.kusionstack.io/v1alpha1", kind: "CollaSet", name: "web", uid: collaSet.metadata.uid });
    await createPod(namespace, "bare");

    await custom.deleteNamespacedCustomObject({ ...group, namespace, name: "logging" });
    // The bare pod does not hold it: its rollout reports the change blocked (dropping a sidecar
    // needs recreation, which the decoration does not ask for) and has the decoration looked at
    // again. The CollaSet pod does: once the controller has looked, the finalizer is still there.
    await eventually(async () => {
      const list = await core.listNamespacedEvent({ namespace, fieldSelector: "involvedObject.name=logging,reason=UpdateBlocked" });
      return list.items.some((event) => event.message?.startsWith("pod bare:") === true) ? true : undefined;
    }, 30_000, "the bare pod's change to be reported blocked");
    await queueIdle(operator.metricsPort, "poddecoration");
    const held = await decoration(namespace, "logging");
    expect(held.metadata.finalizers).toEqual(["poddecoration.kusionstack.io/protection"]);

    await core.deleteNamespacedPod({ namespace, name: "web-0", gracePeriodSeconds: 0 });
    await eventually(async () => {
      try {
        await decoration(namespace, "logging");
        return undefined;
      } catch {
        return true;
      }
    }, 30_000, "the decoration to be released");
    await eventually(async () => ((await revisions(namespace)).length === 0 ? true : undefined), 60_000, "the garbage collector to remove its revisions");
    // The bare pod keeps its sidecar: deleting a decoration never touches non-CollaSet pods.
    const bare = await core.readNamespacedPod({ namespace, name: "bare" });
    expect(bare.spec!.containers.map((container) => container.name)).toContain("logging-sidecar");
  });
});

describe("leader election", () => {
  test("hands the controllers to the other replica when the leader is killed", async ({ namespace }) => {
    await operator.stop();
    const leader = await startOperator({ args: ["--leader-elect"] });
    // Started second, the follower is where the webhook configurations point: killing the
    // leader then takes away the controllers only.
    const follower = await startOperator({ args: ["--leader-elect"] });
    try {
      await apply(manifest(namespace, "first", "fluent-bit:v1"));
      await settled(namespace, "first", (pd) => pd.status?.updatedRevision !== undefined, "the leader to reconcile");
      expect(leader.logs()).toContain("controllers starting");
      expect(follower.logs()).not.toContain("controllers starting");

      await leader.kill("SIGKILL");
      // The leader's last renewal, as the Lease records it: it holds the lease one lease duration after.
      const lease = await clients().config.makeApiClient(CoordinationV1Api).readNamespacedLease({ namespace: OPERATOR_NAMESPACE, name: "pod-decorator" });
      const expires = new Date(lease.spec!.renewTime!).getTime() + lease.spec!.leaseDurationSeconds! * 1000;
      await apply(manifest(namespace, "second", "fluent-bit:v1"));
      await eventually(async () => ((await decoration(namespace, "second")).status?.updatedRevision !== undefined ? true : undefined), 40_000, "the follower to take over");
      // The follower took over (by its own log), and not before the killed leader's lease ran out:
      // two leaders never run the controllers at once. (Promptness is the 40 s wait above; a bound
      // in wall-clock time measures the machine's load.) The Lease's times have microseconds; the
      // log's milliseconds.
      const started = follower.logs().split("\n").find((line) => line.includes('"controllers starting"'));
      expect(started).toBeDefined();
      expect((JSON.parse(started!) as { time: number }).time).toBeGreaterThanOrEqual(expires - 1);
    } finally {
      await follower.stop();
      await leader.stop();
      operator = await startOperator();
    }
  });
});
