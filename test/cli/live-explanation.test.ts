import { describe, expect, it } from "vitest";
import type { Pod } from "../../src/api/pod.ts";
import type { PodDecoration } from "../../src/api/poddecoration.ts";
import { asSeenFrom, type ClusterPodDecoration } from "../../src/api/cluster-poddecoration.ts";
import { explainClusterDecoration, explainDecoration, explainPod, type ClusterView, type DecorationVerdict } from "../../src/cli/live-explanation.ts";
import { formatDecorationReport, formatPodReport } from "../../src/cli/live-explanation-format.ts";

const NS = "shop";
type Spec = PodDecoration["spec"];

function decoration(name: string, spec: Partial<Spec> = {}, extra: { created?: string; updated?: string; current?: string; deleting?: boolean; conditions?: NonNullable<PodDecoration["status"]>["conditions"] } = {}): PodDecoration {
  const updated = "updated" in extra ? extra.updated : `${name}-r2`;
  return {
    apiVersion: "apps.kusionstack.io/v1alpha1",
    kind: "PodDecoration",
    metadata: { name, namespace: NS, creationTimestamp: extra.created ?? "2026-01-01T00:00:00Z", ...(extra.deleting === true ? { deletionTimestamp: "2026-01-03T00:00:00Z" } : {}) },
    spec: { selector: { matchLabels: { app: "web" } }, ...spec },
    status: {
      ...(updated === undefined ? {} : { updatedRevision: updated }),
      ...(extra.current === undefined ? {} : { currentRevision: extra.current }),
      ...(extra.conditions === undefined ? {} : { conditions: extra.conditions }),
    },
  };
}

function pod(name: string, recorded: Record<string, string> | null, options: { labels?: Record<string, string>; created?: string; collaSet?: string; ready?: boolean; phase?: string } = {}): Pod {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      name,
      namespace: NS,
      creationTimestamp: options.created ?? "2026-01-02T00:00:00Z",
      labels: { app: "web", ...options.labels },
      ...(recorded === null ? {} : { annotations: { "poddecoration.kusionstack.io/revisions": JSON.stringify(Object.entries(recorded).map(([pd, revision]) => ({ name: pd, revision }))) } }),
      ...(options.collaSet === undefined ? {} : { ownerReferences: [{ apiVersion: "apps.kusionstack.io/v1alpha1", kind: "CollaSet", name: options.collaSet, uid: "u", controller: true }] }),
    },
    spec: { containers: [{ name: "app", image: "app:1" }] },
    status: { phase: options.phase ?? "Running", conditions: [{ type: "Ready", status: options.ready === false ? "False" : "True" }] },
  };
}

const webhookInScope: ClusterView["webhook"] = {
  configuration: "pod-decorator",
  webhook: { name: "pods.pod-decorator.kusionstack.io", namespaceSelector: { matchExpressions: [{ key: "poddecoration.kusionstack.io/injection", operator: "NotIn", values: ["disabled"] }] }, matchConditions: [{ name: "not-a-mirror-pod" }] },
};

function view(decorations: PodDecoration[], pods: Pod[], overrides: Partial<ClusterView> = {}): ClusterView {
  return { namespaceLabels: { "kubernetes.io/metadata.name": NS }, decorations, pods, webhook: webhookInScope, renderErrors: new Map(), ...overrides };
}

function verdictOf(subject: Pod, world: ClusterView, name: string): DecorationVerdict {
  const verdict = explainPod(subject, world).decorations.find((candidate) => candidate.name === name);
  if (verdict === undefined) throw new Error(`no verdict for ${name}`);
  return verdict;
}

describe("explainPod", () => {
  it("reports a pod on the updated revision as updated, with no reason", () => {
    const subject = pod("web-0", { logging: "logging-r2" });
    expect(verdictOf(subject, view([decoration("logging")], [subject]), "logging")).toEqual({
      name: "logging", matches: true, state: "updated", podRevision: "logging-r2", targetRevision: "logging-r2", updatedRevision: "logging-r2", reasons: [],
    });
  });

  it("says a decoration whose selector does not match does not match", () => {
    const subject = pod("web-0", {}, { labels: { app: "api" } });
    const verdict = verdictOf(subject, view([decoration("logging")], [subject]), "logging");
    expect(verdict).toMatchObject({ matches: false, state: "not-matched", reasons: [{ reason: "selector" }] });
    expect(verdict.reasons[0]?.detail).toContain("does not match the pod's labels");
  });

  it("reports a decoration being deleted as not applying", () => {
    const subject = pod("web-0", {});
    expect(verdictOf(subject, view([decoration("logging", {}, { deleting: true })], [subject]), "logging")).toMatchObject({ matches: false, state: "not-matched", reasons: [{ reason: "deleting" }] });
  });

  it("names the decoration an exclusive group was lost to", () => {
    const subject = pod("web-0", null);
    const world = view([decoration("light", { injectStrategy: { group: "mesh", weight: 1 } }), decoration("heavy", { injectStrategy: { group: "mesh", weight: 5 } })], [subject]);
    const verdict = verdictOf(subject, world, "light");
    expect(verdict).toMatchObject({ matches: true, state: "excluded", reasons: [{ reason: "group" }] });
    expect(verdict.reasons[0]?.detail).toBe("group mesh: weight 1 loses to weight 5 (heavy)");
  });

  it("names the group member the pod already carries", () => {
    const subject = pod("web-0", { light: "light-r2" });
    const world = view([decoration("light", { injectStrategy: { group: "mesh", weight: 1 } }), decoration("heavy", { injectStrategy: { group: "mesh", weight: 5 } })], [subject]);
    expect(verdictOf(subject, world, "heavy")).toMatchObject({ state: "excluded", reasons: [{ reason: "group", detail: "group mesh is already applied to the pod by light" }] });
  });

  it("gives the pod's position when the partition holds it back", () => {
    // Three matched pods, partition 2: in update order (updated first, then name) only the first moves.
    const pods = [pod("a", { logging: "logging-r2" }), pod("b", { logging: "logging-r1" }), pod("c", { logging: "logging-r1" })];
    const world = view([decoration("logging", { updateStrategy: { rollingUpdate: { partition: 2 } } }, { current: "logging-r1" })], pods);
    const verdict = verdictOf(pods[2]!, world, "logging");
    expect(verdict).toMatchObject({ matches: true, state: "held", podRevision: "logging-r1", targetRevision: "logging-r1", reasons: [{ reason: "partition" }] });
    expect(verdict.reasons[0]?.detail).toBe("held by partition 2: position 3 of 3 in update order, and only the first 1 move");
    expect(verdictOf(pods[0]!, world, "logging").state).toBe("updated");
  });

  it("says a pod outside the canary selector keeps what it has", () => {
    const pods = [pod("a", { logging: "logging-r1" }, { labels: { canary: "true" } }), pod("b", { logging: "logging-r1" })];
    const world = view([decoration("logging", { updateStrategy: { rollingUpdate: { selector: { matchLabels: { canary: "true" } } } } })], pods);
    expect(verdictOf(pods[1]!, world, "logging")).toMatchObject({ state: "held", targetRevision: "logging-r1", reasons: [{ reason: "canary-selector" }] });
    // The canary itself should move: the PodDecoration controller's rollout takes a bare pod there.
    expect(verdictOf(pods[0]!, world, "logging")).toMatchObject({ state: "outdated", targetRevision: "logging-r2", reasons: [{ reason: "rollout-in-progress" }] });
    expect(verdictOf(pods[0]!, world, "logging").reasons[0]?.detail).toContain("as a pod without a controller, on its own");
  });

  it("says a CollaSet pod behind is on its controller's way", () => {
    const subject = pod("web-0", { logging: "logging-r1" }, { collaSet: "web" });
    const report = explainPod(subject, view([decoration("logging")], [subject]));
    expect(report.pod).toMatchObject({ owner: "CollaSet/web", updatedBy: "collaset-controller" });
    expect(report.decorations[0]).toMatchObject({ state: "outdated", reasons: [{ reason: "rollout-in-progress" }] });
  });

  it("says why the rollout to pods of other owners holds a pod, from the decoration's status", () => {
    const owned = (name: string) => ({ ...pod(name, { logging: "logging-r1" }, { labels: { "pod-template-hash": "5d8f" } }), metadata: { ...pod(name, { logging: "logging-r1" }, { labels: { "pod-template-hash": "5d8f" } }).metadata, ownerReferences: [{ apiVersion: "apps/v1", kind: "ReplicaSet", name: "web-5d8f", uid: "rs", controller: true }] } });
    const [a, b, c] = [owned("web-a"), owned("web-b"), owned("web-c")];
    const logging = decoration("logging");
    logging.status = {
      ...logging.status,
      workloads: [{
        kind: "Deployment", name: "web", matchedPods: 3, updatedPods: 0, outdatedPods: 3, blockedPods: 2,
        blocked: [
          { pod: "web-a", reason: "NeedsRecreation", message: "pod web-a: decoration logging from logging-r1 to logging-r2 changes containers" },
          { pod: "web-b", reason: "EvictionRefused", message: "pod web-b: eviction refused: Cannot evict pod as it would violate the pod's disruption budget." },
        ],
      }],
    };
    const world = view([logging], [a, b, c]);
    expect(explainPod(a, world).pod).toMatchObject({ owner: "ReplicaSet/web-5d8f", updatedBy: "poddecoration-controller" });
    expect(verdictOf(a, world, "logging")).toMatchObject({ state: "outdated", reasons: [{ reason: "needs-recreation", detail: expect.stringContaining("changes containers") as string }] });
    expect(verdictOf(b, world, "logging")).toMatchObject({ state: "outdated", reasons: [{ reason: "update-blocked", detail: expect.stringContaining("EvictionRefused: pod web-b: eviction refused") as string }] });
    expect(verdictOf(c, world, "logging").reasons).toEqual([{ reason: "rollout-in-progress", detail: expect.stringContaining("of its Deployment web at a time") as string }]);

    // Beyond the status's list: every outdated pod blocked, the listed ones all for one reason.
    const [deployment] = logging.status.workloads ?? [];
    const fewer = { ...logging, status: { ...logging.status, workloads: [{ ...deployment!, outdatedPods: 3, blockedPods: 3, blocked: [deployment!.blocked![0]!] }] } };
    expect(verdictOf(c, view([fewer], [a, b, c]), "logging")).toMatchObject({ reasons: [{ reason: "needs-recreation", detail: expect.stringContaining("every outdated pod of the workload is blocked (3; the status lists the first 1 by name)") as string }] });
  });

  it("plans the pod with its namespace's pods even when the list missed it", () => {
    const pods = [pod("a", { logging: "logging-r1" }), pod("b", { logging: "logging-r1" })];
    const world = view([decoration("logging", { updateStrategy: { rollingUpdate: { partition: 1 } } })], [pods[0]!]);
    expect(verdictOf(pods[1]!, world, "logging").reasons[0]?.detail).toBe("held by partition 1: position 2 of 2 in update order, and only the first 1 move");
  });

  it("says the pod was created before the decoration", () => {
    const subject = pod("web-0", {}, { created: "2025-12-31T00:00:00Z" });
    const verdict = verdictOf(subject, view([decoration("logging")], [subject]), "logging");
    expect(verdict).toMatchObject({ matches: true, state: "missing", targetRevision: "logging-r2", reasons: [{ reason: "created-before" }, { reason: "rollout-in-progress" }] });
    expect(verdict.reasons[0]?.detail).toContain("before the decoration (2026-01-01T00:00:00Z)");
  });

  it("says the namespace is outside the webhook's scope", () => {
    const subject = pod("web-0", null);
    const world = view([decoration("logging")], [subject], { namespaceLabels: { "kubernetes.io/metadata.name": NS, "poddecoration.kusionstack.io/injection": "disabled" } });
    const report = explainPod(subject, world);
    expect(report.webhook.inScope).toBe(false);
    expect(report.decorations[0]).toMatchObject({ state: "missing", reasons: [{ reason: "outside-webhook-scope" }, { reason: "rollout-in-progress" }] });
    expect(report.decorations[0]?.reasons[0]?.detail).toContain("namespaceSelector");
  });

  it("says a held pod with nothing recorded was never seen by the webhook", () => {
    const subject = pod("web-0", null);
    const world = view([decoration("logging", { updateStrategy: { rollingUpdate: { partition: 1 } } })], [subject], { namespaceLabels: { "poddecoration.kusionstack.io/injection": "disabled" } });
    expect(verdictOf(subject, world, "logging")).toMatchObject({ state: "held", reasons: [{ reason: "partition" }, { reason: "outside-webhook-scope" }] });
  });

  it("says the pod is outside the webhook's objectSelector", () => {
    const subject = pod("web-0", null);
    const world = view([decoration("logging")], [subject], { webhook: { configuration: "pd", webhook: { objectSelector: { matchLabels: { decorate: "yes" } } } } });
    expect(verdictOf(subject, world, "logging").reasons[0]).toMatchObject({ reason: "outside-webhook-scope", detail: expect.stringContaining("objectSelector") as string });
  });

  it("says the webhook never decided on an in-scope pod that has no revisions annotation", () => {
    const subject = pod("web-0", null);
    expect(verdictOf(subject, view([decoration("logging")], [subject]), "logging").reasons).toEqual([
      { reason: "not-admitted-by-webhook", detail: expect.stringContaining("no revisions annotation") as string },
      { reason: "rollout-in-progress", detail: expect.stringContaining("the PodDecoration controller moves the pod to logging-r2") as string },
    ]);
  });

  it("reports no scope verdict when the webhook configuration could not be read", () => {
    const subject = pod("web-0", null);
    const report = explainPod(subject, view([], [subject], { webhook: { unreadable: "forbidden" } }));
    expect(report.webhook).toEqual({ inScope: undefined, detail: "forbidden" });
  });

  it("adds the last render error to a pod that does not have the revision it should", () => {
    const subject = pod("web-0", {});
    const world = view([decoration("logging")], [subject], { renderErrors: new Map([["logging", "TemplateValid is False (DryRunRejected): spec.containers[1].image: Required value"]]) });
    expect(verdictOf(subject, world, "logging").reasons.map((reason) => reason.reason)).toEqual(["not-admitted-by-webhook", "rollout-in-progress", "render-error"]);
  });

  it("says no revision is stored yet", () => {
    const subject = pod("web-0", {});
    expect(verdictOf(subject, view([decoration("logging", {}, { updated: undefined })], [subject]), "logging")).toMatchObject({ state: "pending", reasons: [{ reason: "revision-pending" }] });
  });

  it("reports a finished pod as outside every rollout", () => {
    const subject = pod("job-0", {}, { phase: "Succeeded" });
    expect(verdictOf(subject, view([decoration("logging")], [subject]), "logging")).toMatchObject({ matches: true, state: "not-matched", reasons: [{ reason: "pod-inactive" }] });
  });

  it("reports a revision the pod still carries from a decoration that no longer matches", () => {
    const subject = pod("web-0", { logging: "logging-r1" }, { labels: { app: "api" } });
    expect(verdictOf(subject, view([decoration("logging")], [subject]), "logging")).toMatchObject({ matches: false, state: "stale", podRevision: "logging-r1", reasons: [{ reason: "selector" }, { reason: "rollout-in-progress" }] });
  });

  it("says what could not be read, in both reports", () => {
    const subject = pod("web-0", {});
    const world = view([decoration("logging")], [subject], { warnings: ["Events in shop could not be read (forbidden)"] });
    expect(explainPod(subject, world).warnings).toEqual(["Events in shop could not be read (forbidden)"]);
    expect(formatDecorationReport(explainDecoration(decoration("logging"), world))).toContain("\nWarning: Events in shop could not be read (forbidden)\n");
  });

  it("prints like kubectl describe", () => {
    const subject = pod("web-0", { logging: "logging-r1" });
    const text = formatPodReport(explainPod(subject, view([decoration("logging")], [subject])));
    expect(text).toContain("Pod:         shop/web-0\n");
    expect(text).toContain("Recorded:    logging=logging-r1\n");
    expect(text).toContain("  logging:\n    Matches:           yes\n    State:             outdated\n    Pod revision:      logging-r1\n    Should have:       logging-r2\n");
    expect(text).toContain("    Why:\n      rollout-in-progress: the PodDecoration controller moves the pod to logging-r2");
  });
});

describe("explainDecoration", () => {
  it("leaves out pods it does not select and names the group winner for the others", () => {
    const pods = [pod("api", {}, { labels: { app: "api" } }), pod("web", null)];
    const light = decoration("light", { injectStrategy: { group: "mesh", weight: 1 } });
    const world = view([light, decoration("heavy", { injectStrategy: { group: "mesh", weight: 5 } })], pods);
    const report = explainDecoration(structuredClone(light), world);
    expect(report.pods).toEqual({ excluded: [{ pod: "web", matches: true, state: "excluded", reasons: [{ reason: "group", detail: "group mesh: weight 1 loses to weight 5 (heavy)" }] }] });
  });

  it("says a CollaSet pod that stopped matching is on its controller's way out", () => {
    const subject = pod("web-0", { logging: "logging-r1" }, { labels: { app: "api" }, collaSet: "web" });
    expect(explainDecoration(decoration("logging"), view([], [subject])).pods.stale).toMatchObject([{ pod: "web-0", reasons: [{ reason: "selector" }, { reason: "rollout-in-progress" }] }]);
  });

  it("groups the pods that match or record it by state", () => {
    const pods = [
      pod("a", { logging: "logging-r2" }),
      pod("b", { logging: "logging-r1" }),
      pod("c", { logging: "logging-r1" }),
      pod("d", null, { created: "2025-12-31T00:00:00Z" }),
      pod("other", {}, { labels: { app: "api" } }),
    ];
    const logging = decoration("logging", { updateStrategy: { rollingUpdate: { partition: 1 } } }, { current: "logging-r1" });
    // Read on its own, the decoration is another object than the listed one.
    const report = explainDecoration(structuredClone(logging), view([logging], pods));
    expect(report.decoration).toEqual({ namespace: NS, name: "logging", updatedRevision: "logging-r2", currentRevision: "logging-r1", partition: 1 });
    // Update order: a (updated first), then the ready pods by name: b, c, d; partition 1 holds d.
    expect(Object.fromEntries(Object.entries(report.pods).map(([state, list]) => [state, list.map((entry) => entry.pod)]))).toEqual({ updated: ["a"], outdated: ["b", "c"], held: ["d"] });
    const text = formatDecorationReport(report);
    expect(text).toContain("  held (1):\n    d  has <none>, should have <none>\n      partition: held by partition 1: position 4 of 4");
    expect(text).not.toContain("other");
  });
});

describe("ClusterPodDecorations in explain", () => {
  function clusterDecoration(name: string, spec: Partial<ClusterPodDecoration["spec"]> = {}, status: { updated?: string; current?: string } = {}): ClusterPodDecoration {
    return {
      apiVersion: "pod-decorator.io/v1alpha1",
      kind: "ClusterPodDecoration",
      metadata: { name, creationTimestamp: "2026-01-01T00:00:00Z" },
      spec: { namespaceSelector: { matchLabels: { mesh: "enabled" } }, selector: { matchLabels: { app: "web" } }, ...spec },
      status: { updatedRevision: status.updated ?? `cpd-${name}-r2`, ...(status.current === undefined ? {} : { currentRevision: status.current }) },
    };
  }

  function clusterRecorded(subject: Pod, revisions: Record<string, string>, namespace = NS): Pod {
    return {
      ...subject,
      metadata: {
        ...subject.metadata,
        namespace,
        annotations: { ...subject.metadata?.annotations, "pod-decorator.io/cluster-revisions": JSON.stringify(Object.entries(revisions).map(([name, revision]) => ({ name, revision }))) },
      },
    };
  }

  it("tells a ClusterPodDecoration from a PodDecoration of the same name, each by its own record", () => {
    const mesh = clusterDecoration("mesh");
    const subject = clusterRecorded(pod("web-0", { mesh: "mesh-r2" }), { mesh: "cpd-mesh-r1" });
    const report = explainPod(subject, view([decoration("mesh"), asSeenFrom(mesh, NS)], [subject]));
    expect(report.decorations.map((verdict) => [verdict.name, verdict.state, verdict.podRevision])).toEqual([
      ["mesh", "updated", "mesh-r2"],
      ["ClusterPodDecoration/mesh", "outdated", "cpd-mesh-r1"],
    ]);
  });

  it("counts a cluster decoration's partition over the pods of every namespace it selects", () => {
    // Partition 1 over three pods in two namespaces: the first two in update order move.
    const mesh = clusterDecoration("mesh", { updateStrategy: { rollingUpdate: { partition: 1 } } }, { current: "cpd-mesh-r1" });
    const a = clusterRecorded(pod("a", null), { mesh: "cpd-mesh-r1" }, "alpha");
    const b = clusterRecorded(pod("b", null), { mesh: "cpd-mesh-r1" }, "beta");
    const c = clusterRecorded(pod("c", null), { mesh: "cpd-mesh-r1" }, "beta");
    const fleet = { pods: [a, b, c], namespaceLabels: (name: string) => ({ mesh: "enabled", "kubernetes.io/metadata.name": name }) };
    const inBeta = view([asSeenFrom(mesh, "beta")], [b, c], { fleet: () => fleet });
    expect(verdictOf(c, inBeta, "ClusterPodDecoration/mesh")).toMatchObject({ state: "held", reasons: [{ reason: "partition", detail: "held by partition 1: position 3 of 3 in update order, and only the first 2 move" }] });
    expect(verdictOf(b, inBeta, "ClusterPodDecoration/mesh")).toMatchObject({ state: "outdated", targetRevision: "cpd-mesh-r2" });
    // Counted in its namespace alone, the partition would count two pods: the fleet decides.
    expect(verdictOf(c, view([asSeenFrom(mesh, "beta")], [b, c]), "ClusterPodDecoration/mesh").reasons[0]?.detail).toBe("held by partition 1: position 2 of 2 in update order, and only the first 1 move");
  });

  it("reports a cluster decoration's pods over its namespaces, those outside the namespace canary held", () => {
    const mesh = clusterDecoration("mesh", { updateStrategy: { rollingUpdate: { namespaceSelector: { matchLabels: { stage: "staging" } } } } }, { current: "cpd-mesh-r1" });
    const staging = clusterRecorded(pod("web-0", null), { mesh: "cpd-mesh-r1" }, "staging");
    const prod = clusterRecorded(pod("web-0", null), { mesh: "cpd-mesh-r1" }, "prod");
    const labelsOf = (name: string) => ({ mesh: "enabled", ...(name === "staging" ? { stage: "staging" } : {}), "kubernetes.io/metadata.name": name });
    const views = new Map([
      ["staging", view([asSeenFrom(mesh, "staging")], [staging], { namespaceLabels: labelsOf("staging") })],
      ["prod", view([asSeenFrom(mesh, "prod")], [prod], { namespaceLabels: labelsOf("prod") })],
    ]);
    const report = explainClusterDecoration(mesh, views);
    expect(report.decoration).toMatchObject({ name: "mesh", namespace: "", clusterScoped: true, namespaces: ["prod", "staging"], namespaceCanary: { matchLabels: { stage: "staging" } } });
    expect(report.pods.outdated?.map((entry) => entry.pod)).toEqual(["staging/web-0"]);
    expect(report.pods.held?.map((entry) => [entry.pod, entry.reasons[0]?.reason])).toEqual([["prod/web-0", "canary-selector"]]);
    expect(report.pods.held?.[0]?.reasons[0]?.detail).toContain("namespaceSelector {\"matchLabels\":{\"stage\":\"staging\"}} (the namespace canary)");
    const text = formatDecorationReport(report);
    expect(text).toContain("ClusterPodDecoration:  mesh\n");
    expect(text).toContain("Namespaces:            prod, staging\n");
    expect(text).toContain("    prod/web-0  has cpd-mesh-r1, should have cpd-mesh-r1\n");
  });
});
