import { describe, expect, it } from "vitest";
import { sameImage } from "../../../src/api/image-reference.ts";
import { instanceIdOf, isAwaitingReplacement, RECREATE_FINALIZER } from "../../../src/controller/collaset/pod-state.ts";
import { isAvailable, runsSpecImages } from "../../../src/controller/pod-availability.ts";
import { pod } from "./fixtures.ts";

describe("CollaSet pod state", () => {
  it("reads the instance id only when it is a plain non-negative integer", () => {
    expect(instanceIdOf(pod("a", { id: 7 }))).toBe(7);
    expect(instanceIdOf(pod("a"))).toBeUndefined();
    const odd = pod("a");
    odd.metadata!.labels!["collaset.kusionstack.io/instance-id"] = "07";
    expect(instanceIdOf(odd)).toBeUndefined();
    odd.metadata!.labels!["collaset.kusionstack.io/instance-id"] = "-1";
    expect(instanceIdOf(odd)).toBeUndefined();
  });

  it("treats the short and the fully qualified Docker Hub names of an image as the same", () => {
    expect(sameImage("nginx:1.27", "docker.io/library/nginx:1.27")).toBe(true);
    expect(sameImage("fluent/fluent-bit:3", "docker.io/fluent/fluent-bit:3")).toBe(true);
    expect(sameImage("nginx", "docker.io/library/nginx:latest")).toBe(true);
    expect(sameImage("registry.example.com:5000/app", "registry.example.com:5000/app:latest")).toBe(true);
    expect(sameImage("nginx:1.27", "nginx:1.28")).toBe(false);
    expect(sameImage("quay.io/nginx:1.27", "nginx:1.27")).toBe(false);
  });

  it("is unavailable while the node still runs an image the spec no longer names", () => {
    const updating = pod("a", { id: 0, images: { app: "nginx:1.28" }, running: { app: "nginx:1.27" } });
    expect(runsSpecImages(updating)).toBe(false);
    expect(isAvailable(updating)).toBe(false);
    expect(isAvailable(pod("a", { id: 0, images: { app: "nginx:1.28" }, running: { app: "docker.io/library/nginx:1.28" } }))).toBe(true);
    expect(isAvailable(pod("a", { id: 0, ready: false }))).toBe(false);
    expect(isAvailable(pod("a", { id: 0, terminating: true }))).toBe(false);
  });

  it("knows a pod deleted for recreation by its finalizer", () => {
    expect(isAwaitingReplacement(pod("a", { terminating: true, finalizers: [RECREATE_FINALIZER] }))).toBe(true);
    expect(isAwaitingReplacement(pod("a", { terminating: true }))).toBe(false);
    expect(isAwaitingReplacement(pod("a", { finalizers: [RECREATE_FINALIZER] }))).toBe(false);
  });
});
