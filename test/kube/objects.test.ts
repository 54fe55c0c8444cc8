import { describe, expect, it } from "vitest";
import { controllerOf, namespacedKey, objectKey, splitKey } from "../../src/kube/objects.ts";
import { formatMicroTime, formatTime, parseTime } from "../../src/kube/timestamps.ts";
import { collectionPath, resources } from "../../src/kube/resources.ts";

describe("object keys", () => {
  it("are namespace/name, or the name alone for cluster-scoped objects, and split back", () => {
    expect(objectKey({ metadata: { namespace: "ns", name: "a" } })).toBe("ns/a");
    expect(objectKey({ metadata: { name: "node-1" } })).toBe("node-1");
    expect(namespacedKey(undefined, "n")).toBe("n");
    expect(splitKey("ns/a")).toEqual({ namespace: "ns", name: "a" });
    expect(splitKey("node-1")).toEqual({ namespace: undefined, name: "node-1" });
  });

  it("find the controller owner reference only", () => {
    const owners = [
      { apiVersion: "v1", kind: "A", name: "a", uid: "1" },
      { apiVersion: "v1", kind: "B", name: "b", uid: "2", controller: true },
    ];
    expect(controllerOf({ metadata: { ownerReferences: owners } })?.uid).toBe("2");
    expect(controllerOf({ metadata: { ownerReferences: owners.slice(0, 1) } })).toBeUndefined();
  });
});

describe("timestamps", () => {
  it("format metav1.Time in whole seconds and MicroTime with six digits", () => {
    const ms = Date.UTC(2026, 1, 3, 4, 5, 6, 789);
    expect(formatTime(ms)).toBe("2026-02-03T04:05:06Z");
    expect(formatMicroTime(ms)).toBe("2026-02-03T04:05:06.789000Z");
    expect(parseTime("2026-02-03T04:05:06.789000Z")).toBe(ms);
    expect(parseTime("yesterday")).toBeUndefined();
  });
});

describe("resource paths", () => {
  it("are built for core and named groups, namespaced or across namespaces", () => {
    expect(collectionPath(resources.pods, "ns")).toBe("/api/v1/namespaces/ns/pods");
    expect(collectionPath(resources.pods)).toBe("/api/v1/pods");
    expect(collectionPath(resources.namespaces, "ignored")).toBe("/api/v1/namespaces");
    expect(collectionPath(resources.podDecorations, "ns")).toBe("/apis/apps.kusionstack.io/v1alpha1/namespaces/ns/poddecorations");
  });
});
