// The PodTransitionRule reconciler over real caches: its finalizer, its status (targets, a detail
// per pod in a stage), each target's verdict annotation as kuperator writes it, a webhook answered
// later, and the release of its pods when it is deleted.
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import type { CollaSet } from "../../../src/api/collaset.ts";
import type { PodTransitionRule, TransitionRule } from "../../../src/api/podtransitionrule.ts";
import { lifecycleLabel } from "../../../src/controller/lifecycle/pod-ops-lifecycle.ts";
import { Expectations } from "../../../src/controller/runtime/expectations.ts";
import type { CachedTransitionRule } from "../../../src/controller/transition-rules/gate.ts";
import { PROTECT_FINALIZER, TransitionRuleReconciler } from "../../../src/controller/transition-rules/reconciler.ts";
import { WebhookCalls, type Exchange } from "../../../src/controller/transition-rules/webhook-calls.ts";
import type { KubeObject, Pod } from "../../../src/kube/objects.ts";
import { applyOperations } from "../collaset/reconciler-harness.ts";
import { FakeClock, settle } from "../fake-clock.ts";
import { FrozenCache } from "../frozen-cache.ts";

// Keyed by the PodTransitionRule's name, as kuperator keys it.
const DETAIL = "detail.podtransitionrule.kusionstack.io/ptr";

function pod(name: string, options: { preCheck?: boolean; ready?: boolean; labels?: Record<string, string> } = {}): Pod {
  return {
    metadata: {
      name,
      namespace: "ns",
      resourceVersion: "1",
      labels: { app: "web", ...options.labels, ...(options.preCheck === true ? { [lifecycleLabel("operating")]: "1", [lifecycleLabel("operationType")]: "update", [lifecycleLabel("preCheck")]: "1" } : {}) },
    },
    status: { conditions: [{ type: "Ready", status: options.ready === false ? "False" : "True" }] },
  };
}

class Harness {
  readonly clock = new FakeClock();
  readonly transitionRules = new FrozenCache<CachedTransitionRule>();
  readonly pods = new FrozenCache<Pod>();
  readonly writes: string[] = [];
  readonly calls: { body: unknown; answer: (value: unknown) => void }[] = [];
  readonly answered: string[] = [];
  readonly reconciler: TransitionRuleReconciler;
  #version = 10;

  constructor() {
    const exchange: Exchange = (_method, _url, body) => new Promise((resolve) => this.calls.push({ body, answer: resolve }));
    const bump = <T extends KubeObject>(object: T): T => ({ ...object, metadata: { ...object.metadata, resourceVersion: String(++this.#version) } });
    this.reconciler = new TransitionRuleReconciler({
      transitionRules: this.transitionRules,
      pods: this.pods,
      collaSets: new FrozenCache<CollaSet & KubeObject>(),
      client: {
        transitionRules: {
          jsonPatch: (namespace, name, operations) => {
            this.writes.push(`rule ${name}`);
            return Promise.resolve(this.transitionRules.upsert(bump(applyOperations(this.transitionRules.get(namespace, name)!, operations)))!);
          },
          jsonPatchStatus: (namespace, name, operations) => {
            this.writes.push(`status ${name}`);
            return Promise.resolve(this.transitionRules.upsert(bump(applyOperations(this.transitionRules.get(namespace, name)!, operations)))!);
          },
        },
        pods: {
          jsonPatch: (namespace, name, operations) => {
            this.writes.push(`pod ${name}`);
            return Promise.resolve(this.pods.upsert(bump(applyOperations(this.pods.get(namespace, name)!, operations)))!);
          },
        },
      },
      webhooks: new WebhookCalls({ exchange, clock: this.clock, onAnswer: (key) => this.answered.push(key) }),
      events: { record: () => undefined },
      expectations: new Expectations({ clock: this.clock }),
      clock: this.clock,
      logger: pino({ level: "silent" }),
    });
    // The cache returns what was stored (frozen copies); upsert returns the previous object.
    const upsert = this.transitionRules.upsert.bind(this.transitionRules);
    this.transitionRules.upsert = (object) => {
      upsert(object);
      return this.transitionRules.get(object.metadata.namespace, object.metadata.name ?? "")!;
    };
    const upsertPod = this.pods.upsert.bind(this.pods);
    this.pods.upsert = (object) => {
      upsertPod(object);
      return this.pods.get(object.metadata?.namespace, object.metadata?.name ?? "")!;
    };
  }

  rule(rules: TransitionRule[]): void {
    const rule: PodTransitionRule = { apiVersion: "apps.kusionstack.io/v1alpha1", kind: "PodTransitionRule", metadata: { name: "ptr", namespace: "ns", uid: "uid-ptr", generation: 1, resourceVersion: "1" }, spec: { selector: { matchLabels: { app: "web" } }, rules } };
    this.transitionRules.upsert(rule as CachedTransitionRule);
  }

  get stored(): CachedTransitionRule {
    return this.transitionRules.get("ns", "ptr")!;
  }

  async reconcile(): Promise<void> {
    await this.reconciler.reconcile("ns/ptr");
  }
}

const annotation = (harness: Harness, name: string, key = DETAIL) => harness.pods.get("ns", name)?.metadata?.annotations?.[key];

describe("TransitionRuleReconciler", () => {
  it("adds kuperator's finalizer, then records its targets and a detail per pod in a stage, and each target's verdict on the pod", async () => {
    const harness = new Harness();
    harness.rule([{ name: "budget", availablePolicy: { maxUnavailableValue: 1 } }]);
    for (const item of [pod("a", { preCheck: true }), pod("b", { preCheck: true }), pod("c"), pod("other", { labels: { app: "db" } })]) harness.pods.upsert(item);
    await harness.reconcile();
    expect(harness.stored.metadata.finalizers).toEqual([PROTECT_FINALIZER]);
    await harness.reconcile();
    expect(harness.stored.status).toMatchObject({
      observedGeneration: 1,
      targets: ["a", "b", "c"],
      details: [
        { name: "a", stage: "PreCheck", passed: true, passedRules: ["budget"] },
        { name: "b", stage: "PreCheck", passed: false, rejectInfo: [{ ruleName: "budget", reason: "[budget] blocked by max unavailable policy: [max unavailable]=1/3, [current unavailable]=1/3" }] },
      ],
    });
    expect(harness.stored.status?.updateTime).toBeDefined();
    expect(annotation(harness, "a")).toBe('{"stage":"PreCheck","passed":true}');
    expect(annotation(harness, "b")).toBe('{"stage":"PreCheck","passed":false,"rejectInfo":[{"ruleName":"budget","reason":"[budget] blocked by max unavailable policy: [max unavailable]=1/3, [current unavailable]=1/3"}]}');
    expect(annotation(harness, "c")).toBe('{"stage":"Unknown","passed":true}');
    expect(annotation(harness, "other")).toBeUndefined();

    // Nothing changed: nothing written.
    const before = harness.writes.length;
    await harness.reconcile();
    expect(harness.writes.slice(before)).toEqual([]);
  });

  it("takes its verdict off a pod it no longer selects, and off every pod when it is deleted, then lets go of its finalizer", async () => {
    const harness = new Harness();
    harness.rule([{ name: "budget", availablePolicy: { maxUnavailableValue: 1 } }]);
    harness.pods.upsert(pod("a"));
    harness.pods.upsert(pod("b"));
    await harness.reconcile();
    await harness.reconcile();
    expect(annotation(harness, "b")).toBeDefined();
    const b = harness.pods.get("ns", "b")!;
    harness.pods.upsert({ ...b, metadata: { ...b.metadata, labels: { app: "db" }, resourceVersion: "99" } });
    await harness.reconcile();
    expect(annotation(harness, "b")).toBeUndefined();
    expect(harness.stored.status?.targets).toEqual(["a"]);

    harness.transitionRules.upsert({ ...harness.stored, metadata: { ...harness.stored.metadata, deletionTimestamp: "2026-01-01T00:00:00Z", resourceVersion: "100" } });
    await harness.reconcile();
    expect(annotation(harness, "a")).toBeUndefined();
    expect(harness.stored.metadata.finalizers).toEqual([]);
  });

  it("checks a webhook rule without waiting for it: the pod is rejected until the answer comes, which makes the rule due again", async () => {
    const harness = new Harness();
    harness.rule([{ name: "budget", webhook: { clientConfig: { url: "http://checker" } } }]);
    harness.pods.upsert(pod("a", { preCheck: true }));
    await harness.reconcile();
    await harness.reconcile();
    expect(JSON.parse(annotation(harness, "a")!)).toEqual({ stage: "PreCheck", passed: false, rejectInfo: [{ ruleName: "budget", reason: expect.stringMatching(/^waiting for the answer of webhook ns\/ptr\/budget, traceId /) as unknown }] });
    expect(harness.calls).toHaveLength(1);
    harness.calls[0]!.answer({ success: true });
    await settle();
    expect(harness.answered).toEqual(["ns/ptr"]);
    await harness.reconcile();
    expect(annotation(harness, "a")).toBe('{"stage":"PreCheck","passed":true}');
    expect(harness.stored.status?.details).toEqual([{ name: "a", stage: "PreCheck", passed: true, passedRules: ["budget"] }]);
    expect(harness.stored.status?.ruleStates).toEqual([{ name: "budget", webhookStatus: { taskStates: [], history: [] } }]);
  });
});
