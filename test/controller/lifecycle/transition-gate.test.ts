// PodOpsLifecycle gated by PodTransitionRules (kuperator's PreCheck and PostCheck stages), through
// the CollaSet reconciler over real caches: the rules' verdicts are the annotations their
// controller writes on the pod (transition-rules/pod-details.ts), played here by the test.
import { describe, expect, it } from "vitest";
import type { PodTransitionRule } from "../../../src/api/podtransitionrule.ts";
import { lifecycleLabel, SERVICE_AVAILABLE_LABEL, SERVICE_READY_GATE } from "../../../src/controller/lifecycle/pod-ops-lifecycle.ts";
import { transitionGate, type CachedTransitionRule } from "../../../src/controller/transition-rules/gate.ts";
import { detailAnnotation, formatVerdict, type PodVerdict } from "../../../src/controller/transition-rules/pod-details.ts";
import type { Pod } from "../../../src/kube/objects.ts";
import { collaSet, ReconcilerHarness } from "../collaset/reconciler-harness.ts";
import { FrozenCache } from "../frozen-cache.ts";

const STUCK_MS = 60_000;

function transitionRule(name: string, stage?: string): CachedTransitionRule {
  const rule: PodTransitionRule = {
    apiVersion: "apps.kusionstack.io/v1alpha1",
    kind: "PodTransitionRule",
    metadata: { name, namespace: "ns", uid: `uid-${name}`, resourceVersion: "1" },
    spec: { selector: { matchLabels: { app: "web" } }, rules: [{ name: "hook", ...(stage === undefined ? {} : { stage }), webhook: { clientConfig: { url: "http://checker" } } }] },
  };
  return rule as CachedTransitionRule;
}

const gate = (pod: Pod | undefined) => pod?.status?.conditions?.find((condition) => condition.type === SERVICE_READY_GATE)?.status;
const label = (pod: Pod | undefined, prefix: Parameters<typeof lifecycleLabel>[0]) => pod?.metadata?.labels?.[lifecycleLabel(prefix)];

async function inService(rules: CachedTransitionRule[]): Promise<{ harness: ReconcilerHarness; podName: string }> {
  const transitionRules = new FrozenCache<CachedTransitionRule>();
  for (const rule of rules) transitionRules.upsert(rule);
  const harness = new ReconcilerHarness({ lifecycle: { drainDelayMs: 0, stuckAfterMs: STUCK_MS, transitions: transitionGate(transitionRules) } });
  harness.applyCollaSet(collaSet({ replicas: 1 }));
  await harness.settle(10);
  const [pod] = harness.pods.list("ns");
  expect(gate(pod)).toBe("True");
  return { harness, podName: pod!.metadata!.name! };
}

/** The transition-rules controller's part: its verdict on the pod. */
function verdict(harness: ReconcilerHarness, podName: string, rule: string, value: PodVerdict): void {
  const pod = harness.pods.get("ns", podName)!;
  harness.pods.upsert({ ...pod, metadata: { ...pod.metadata, resourceVersion: `${pod.metadata?.resourceVersion ?? ""}v`, annotations: { ...pod.metadata?.annotations, [detailAnnotation(rule)]: formatVerdict(value) } } });
}

describe("PodOpsLifecycle gated by PodTransitionRules", () => {
  it("holds a pod in its pre-check, in traffic, until every rule that selects it has passed it there", async () => {
    const { harness, podName } = await inService([transitionRule("alpha"), transitionRule("beta")]);
    harness.applyCollaSet(collaSet({ replicas: 1, image: "nginx:1.28" }));
    await harness.reconciler.reconcile("ns/web");
    let pod = harness.pods.get("ns", podName);
    // Begun, with the pre-check label alone: still serving.
    expect(label(pod, "operating")).toBeDefined();
    expect(label(pod, "preCheck")).toBeDefined();
    expect(label(pod, "preChecked")).toBeUndefined();
    expect(gate(pod)).toBe("True");
    expect(pod?.metadata?.labels?.[SERVICE_AVAILABLE_LABEL]).toBeDefined();
    expect(harness.events.map((event) => event.message)).toContain(`pod ${podName} is pre-checked by its PodTransitionRules before it leaves traffic for an update (PodOpsLifecycle)`);

    // One rule passed it, the other said no: it stays.
    verdict(harness, podName, "alpha", { stage: "PreCheck", passed: true });
    verdict(harness, podName, "beta", { stage: "PreCheck", passed: false, rejectInfo: [{ ruleName: "hook", reason: "Webhook check rejected" }] });
    await harness.settle(5);
    pod = harness.pods.get("ns", podName);
    expect(label(pod, "preChecked")).toBeUndefined();
    expect(pod?.spec?.containers[0]?.image).toBe("nginx:1.27");
    expect(gate(pod)).toBe("True");

    // Waiting past stuckAfter is reported, naming the rule and its reason.
    await harness.clock.advance(STUCK_MS);
    await harness.reconciler.reconcile("ns/web");
    expect(harness.events.find((event) => event.reason === "LifecycleStuck")?.message).toMatch(new RegExp(`^pod ${podName}: PodOpsLifecycle stuck for \\d+s: PodTransitionRule beta: hook: Webhook check rejected$`));

    // Both pass: it leaves traffic and is updated.
    verdict(harness, podName, "beta", { stage: "PreCheck", passed: true });
    await harness.settle(10);
    pod = harness.pods.get("ns", podName);
    expect(pod?.spec?.containers[0]?.image).toBe("nginx:1.28");
    expect(label(pod, "preChecked")).toBeUndefined();
    expect(gate(pod)).toBe("True");
    expect(harness.events.map((event) => event.reason)).toContain("PreChecked");
  });

  it("does not take a verdict of another stage (an earlier operation's, or Unknown) for a pass", async () => {
    const { harness, podName } = await inService([transitionRule("alpha")]);
    verdict(harness, podName, "alpha", { stage: "Unknown", passed: true });
    harness.applyCollaSet(collaSet({ replicas: 1, image: "nginx:1.28" }));
    await harness.settle(5);
    expect(label(harness.pods.get("ns", podName), "preCheck")).toBeDefined();
    expect(harness.pods.get("ns", podName)?.spec?.containers[0]?.image).toBe("nginx:1.27");
  });

  it("with a PostCheck rule, holds the operation after the update until the rule passes it, then ends it", async () => {
    const { harness, podName } = await inService([transitionRule("after", "PostCheck")]);
    harness.applyCollaSet(collaSet({ replicas: 1, image: "nginx:1.28" }));
    await harness.settle(10);
    let pod = harness.pods.get("ns", podName);
    // No PreCheck rule: pre-checked at once; updated; then its PostCheck stage begins.
    expect(pod?.spec?.containers[0]?.image).toBe("nginx:1.28");
    expect(label(pod, "postCheck")).toBeDefined();
    expect(label(pod, "operating")).toBeDefined();
    verdict(harness, podName, "after", { stage: "PostCheck", passed: true });
    await harness.settle(10);
    pod = harness.pods.get("ns", podName);
    expect(label(pod, "operating")).toBeUndefined();
    expect(label(pod, "postCheck")).toBeUndefined();
    expect(gate(pod)).toBe("True");
  });

  it("gates scale-ins too: a scaled-in pod is deleted only once its rules pass it", async () => {
    const { harness, podName } = await inService([transitionRule("alpha")]);
    harness.applyCollaSet(collaSet({ replicas: 0 }));
    await harness.settle(5);
    expect(harness.pods.get("ns", podName)?.metadata?.labels?.[lifecycleLabel("operationType")]).toBe("scale-in");
    expect(harness.pods.get("ns", podName)?.metadata?.deletionTimestamp).toBeUndefined();
    verdict(harness, podName, "alpha", { stage: "PreCheck", passed: true });
    await harness.settle(10);
    expect(harness.pods.get("ns", podName)).toBeUndefined();
  });
});
