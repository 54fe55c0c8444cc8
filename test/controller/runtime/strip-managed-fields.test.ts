import { describe, expect, it } from "vitest";
import { stripManagedFields } from "../../../src/controller/runtime/strip-managed-fields.ts";
import type { Pod } from "../../../src/kube/objects.ts";

describe("stripManagedFields", () => {
  const managedFields = [{ manager: "kubelet", operation: "Update", subresource: "status", fieldsType: "FieldsV1", fieldsV1: { "f:status": {} } }];

  it("drops metadata.managedFields and keeps everything else", () => {
    const pod: Pod = {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "web-1", namespace: "shop", labels: { app: "web" }, ownerReferences: [{ apiVersion: "apps/v1", kind: "ReplicaSet", name: "web", uid: "u1" }], managedFields },
      spec: { containers: [{ name: "app", image: "web:1" }] },
      status: { phase: "Running" },
    };
    expect(stripManagedFields(pod)).toEqual({
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "web-1", namespace: "shop", labels: { app: "web" }, ownerReferences: [{ apiVersion: "apps/v1", kind: "ReplicaSet", name: "web", uid: "u1" }] },
      spec: { containers: [{ name: "app", image: "web:1" }] },
      status: { phase: "Running" },
    });
  });

  it("keeps what PodOpsLifecycle reads: readiness gates, conditions with their transition times, finalizers, container statuses", () => {
    const pod: Pod = {
      metadata: { name: "web-1", labels: { "operating.podopslifecycle.kusionstack.io/collaset": "1" }, finalizers: ["prot.podopslifecycle.kusionstack.io/lb"], managedFields },
      spec: { containers: [{ name: "app", image: "web:1" }], readinessGates: [{ conditionType: "pod.kusionstack.io/service-ready" }] },
      status: {
        conditions: [{ type: "pod.kusionstack.io/service-ready", status: "False", lastTransitionTime: "2026-11-23T10:00:00Z" }, { type: "Ready", status: "False", lastTransitionTime: "2026-11-23T10:00:01Z" }],
        containerStatuses: [{ name: "app", image: "web:1", imageID: "sha256:1", ready: true, restartCount: 0 }],
      },
    };
    const { managedFields: _dropped, ...metadata } = pod.metadata!;
    expect(stripManagedFields(pod)).toEqual({ ...pod, metadata });
  });

  it("leaves its input untouched, so a frozen object can be transformed", () => {
    const pod: Pod = Object.freeze({ metadata: Object.freeze({ name: "web-1", managedFields }) });
    const stripped = stripManagedFields(pod);
    expect(pod.metadata?.managedFields).toBe(managedFields);
    expect(stripped.metadata).toEqual({ name: "web-1" });
  });

  it("returns an object without managedFields as it is", () => {
    const pod: Pod = { metadata: { name: "web-1" } };
    expect(stripManagedFields(pod)).toBe(pod);
  });
});
