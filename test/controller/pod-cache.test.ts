// The pod cache keeps only what controllers read (src/controller/pod-cache.ts): every reader
// answers the same on the kept pod as on the pod the API server sent. The pod is the one
// captured from a real API server (test/bench/fixtures/pod.json), made to carry what the
// lifecycle readers need: a readiness gate, a finalizer, a deletion timestamp, a native sidecar.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import type { Pod as EnginePod } from "../../src/api/pod.ts";
import { defaultPodDecoration } from "../../src/api/poddecoration.ts";
import { podUpdate } from "../../src/controller/pod-update.ts";
import { instanceIdOf, isReady, isScheduled, templateRevisionOf } from "../../src/controller/collaset/pod-state.ts";
import { isAvailable, isTerminating, runsSpecImages } from "../../src/controller/pod-availability.ts";
import { podCacheProjection } from "../../src/controller/pod-cache.ts";
import { podLabelIndexFunc, podRecordedDecorationIndexFunc } from "../../src/controller/poddecoration/pod-indexes.ts";
import { collaSetOwnerOf } from "../../src/api/owners.ts";
import { containersReady, hasServiceReadyGate, inLifecycle, lifecycleStep, protectionFinalizers, readyToOperate, serviceReady } from "../../src/controller/lifecycle/pod-ops-lifecycle.ts";
import { samplePod } from "../../src/controller/poddecoration/template-validation.ts";
import { webhookParameter } from "../../src/controller/transition-rules/webhook-parameters.ts";
import { transitionStage } from "../../src/controller/lifecycle/pod-ops-lifecycle.ts";
import { recordedRevisions } from "../../src/decoration/recording.ts";
import { isMatchedPod, isPodReady } from "../../src/decoration/rollout.ts";
import { controllerOf, type Pod } from "../../src/kube/objects.ts";

const captured = JSON.parse(readFileSync(new URL("../bench/fixtures/pod.json", import.meta.url), "utf8")) as Pod;

function variants(): Pod[] {
  const base = structuredClone(captured);
  const lifecycle = structuredClone(captured);
  lifecycle.metadata!.finalizers = ["example.com/lifecycle"];
  lifecycle.metadata!.deletionTimestamp = "2026-04-01T00:00:00Z";
  lifecycle.spec!.readinessGates = [{ conditionType: "example.com/service-ready" }];
  lifecycle.spec!.initContainers = [...(lifecycle.spec!.initContainers ?? []), { name: "sidecar", image: "sidecar:1", restartPolicy: "Always" }];
  lifecycle.status!.conditions = [...(lifecycle.status!.conditions ?? []), { type: "example.com/service-ready", status: "False", lastTransitionTime: "2026-04-01T00:00:00Z" }];
  return [base, lifecycle];
}

const decoration = defaultPodDecoration({
  apiVersion: "apps.kusionstack.io/v1alpha1",
  kind: "PodDecoration",
  metadata: { name: "mesh", namespace: captured.metadata?.namespace ?? "" },
  spec: { selector: { matchLabels: { ...captured.metadata?.labels } }, template: {} },
});

describe("podCacheProjection", () => {
  it("drops what no controller reads", () => {
    const kept = podCacheProjection(captured);
    expect(kept.metadata?.managedFields).toBeUndefined();
    expect(kept.spec?.tolerations).toBeUndefined();
    expect(kept.spec?.affinity).toBeUndefined();
    expect(kept.spec?.containers.some((container) => container.env !== undefined || container.resources !== undefined)).toBe(false);
    expect(kept.status?.podIPs).toBeUndefined();
    expect(JSON.stringify(kept).length).toBeLessThan(JSON.stringify(captured).length / 2);
  });

  it("keeps metadata, readiness gates, conditions, container statuses and containers by position", () => {
    for (const pod of variants()) {
      const kept = podCacheProjection(pod);
      const { managedFields: _managedFields, ...metadata } = pod.metadata!;
      expect(kept.metadata).toEqual(metadata);
      expect(kept.spec?.readinessGates).toEqual(pod.spec?.readinessGates);
      expect(kept.spec?.volumes).toEqual(pod.spec?.volumes);
      expect(kept.status?.conditions).toEqual(pod.status?.conditions);
      expect(kept.status?.containerStatuses).toEqual(pod.status?.containerStatuses);
      expect(kept.status?.initContainerStatuses).toEqual(pod.status?.initContainerStatuses);
      expect(kept.spec?.containers.map((container) => container.name)).toEqual(pod.spec?.containers.map((container) => container.name));
      expect(kept.spec?.initContainers?.map((container) => [container.name, container.restartPolicy])).toEqual(pod.spec?.initContainers?.map((container) => [container.name, container.restartPolicy]));
    }
  });

  it("does not change the pod it is given", () => {
    const pod = structuredClone(captured);
    podCacheProjection(pod);
    expect(pod).toEqual(captured);
  });

  it("every controller reader answers the same on the kept pod", () => {
    const readers: Record<string, (pod: Pod) => unknown> = {
      isPodReady, isReady, isAvailable, isScheduled, isTerminating, runsSpecImages, instanceIdOf, templateRevisionOf, collaSetOwnerOf,
      controllerOf: (pod) => controllerOf(pod),
      lifecycleStep, inLifecycle, hasServiceReadyGate, serviceReady, protectionFinalizers, containersReady,
      readyToOperate: (pod) => readyToOperate(pod, 0, 10_000, 5_000),
      isMatchedPod: (pod) => isMatchedPod(decoration, pod),
      recordedRevisions: (pod) => [...(recordedRevisions(pod) ?? new Map())],
      labelIndex: podLabelIndexFunc,
      recordedIndex: podRecordedDecorationIndexFunc,
      samplePod: (pod) => samplePod(decoration, pod),
      transitionRuleParameters: (pod) => ["metadata.labels", "spec.nodeName", "spec.serviceAccountName", "status.podIP", "status.hostIP"].map((fieldPath) => webhookParameter({ key: fieldPath, valueFrom: { fieldRef: { fieldPath } } }, pod)),
      transitionStage,
      inPlaceUpdate: (pod) => {
        const from = { spec: { containers: pod.spec!.containers.map(({ name, image }) => ({ name, image })) } } as EnginePod;
        const to = { spec: { containers: pod.spec!.containers.map(({ name, image }, index) => ({ name, image: index === 1 ? "app:next" : image })) } } as EnginePod;
        return podUpdate(pod, from, to);
      },
    };
    for (const pod of variants()) {
      const kept = podCacheProjection(pod);
      for (const [name, read] of Object.entries(readers)) expect({ name, answer: read(kept) }).toEqual({ name, answer: read(pod) });
    }
  });
});
