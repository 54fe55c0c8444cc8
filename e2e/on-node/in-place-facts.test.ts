// What the kubelet (Kubernetes 1.37, containerd 2.4, runc) really does when a live pod's images
// change: the facts the in-place path relies on (src/controller/collaset/pod-update.ts). In
// place means the pod keeps its UID and only the changed container restarts, with the new image.
import type { V1Pod } from "@kubernetes/client-node";
import { describe, expect } from "vitest";
import { kubectl, test } from "../support/cluster.ts";
import { containerView, createRunningPod, podReaches } from "../support/real-pods.ts";
import { testImage } from "../node/test-images.ts";

function podWith(name: string, spec: V1Pod["spec"]): V1Pod {
  return { metadata: { name }, spec: { terminationGracePeriodSeconds: 5, ...spec! } };
}

async function patchImage(namespace: string, pod: string, path: string, image: string): Promise<void> {
  const result = await kubectl(["patch", "pod", pod, "-n", namespace, "--type=json", "-p", JSON.stringify([{ op: "replace", path, value: image }])]);
  expect(result.stderr).toBe("");
  expect(result.code).toBe(0);
}

/** Waits until container `name` runs `image` after a restart, and returns the pod then. */
function restartedWith(namespace: string, pod: string, name: string, image: string): Promise<V1Pod> {
  return podReaches(namespace, pod, (current) => {
    const view = containerView(current, name);
    return view?.image === image && view.running && view.restartCount === 1 ? current : undefined;
  }, `${name} restarted with ${image}`);
}

describe("what the kubelet does in place", () => {
  test("a container's new image restarts that container alone, in the same pod", async ({ namespace }) => {
    const before = await createRunningPod(namespace, podWith("regular", {
      containers: [{ name: "app", image: testImage("app") }, { name: "sidecar", image: testImage("sidecar") }],
    }));
    await patchImage(namespace, "regular", "/spec/containers/1/image", testImage("sidecar", "2"));
    const after = await restartedWith(namespace, "regular", "sidecar", testImage("sidecar", "2"));
    expect(after.metadata!.uid).toBe(before.metadata!.uid);
    expect(containerView(after, "sidecar")!.imageID).not.toBe(containerView(before, "sidecar")!.imageID);
    expect(containerView(after, "app")).toEqual(containerView(before, "app"));
  });

  test("a native sidecar's new image restarts that sidecar alone, in the same pod", async ({ namespace }) => {
    const before = await createRunningPod(namespace, podWith("native", {
      initContainers: [{ name: "proxy", image: testImage("proxy"), restartPolicy: "Always" }, { name: "setup", image: testImage("init"), command: ["true"] }],
      containers: [{ name: "app", image: testImage("app") }],
    }));
    await patchImage(namespace, "native", "/spec/initContainers/0/image", testImage("proxy", "2"));
    const after = await restartedWith(namespace, "native", "proxy", testImage("proxy", "2"));
    expect(after.metadata!.uid).toBe(before.metadata!.uid);
    expect(containerView(after, "proxy")!.imageID).not.toBe(containerView(before, "proxy")!.imageID);
    expect(containerView(after, "setup")).toEqual(containerView(before, "setup"));
    expect(containerView(after, "app")).toEqual(containerView(before, "app"));
  });

  test("a regular init container's new image is stored but never run on the live pod", async ({ namespace }) => {
    const before = await createRunningPod(namespace, podWith("init", {
      initContainers: [{ name: "setup", image: testImage("init"), command: ["true"] }],
      containers: [{ name: "app", image: testImage("app") }, { name: "marker", image: testImage("sidecar") }],
    }));
    // One update changes the init container and, as a marker, a regular container: once the
    // marker has restarted, the kubelet has acted on the whole new spec.
    const result = await kubectl(["patch", "pod", "init", "-n", namespace, "--type=json", "-p", JSON.stringify([
      { op: "replace", path: "/spec/initContainers/0/image", value: testImage("init", "2") },
      { op: "replace", path: "/spec/containers/1/image", value: testImage("sidecar", "2") },
    ])]);
    expect(result.code).toBe(0);
    const after = await restartedWith(namespace, "init", "marker", testImage("sidecar", "2"));
    expect(after.spec!.initContainers![0]!.image).toBe(testImage("init", "2"));
    expect(after.metadata!.uid).toBe(before.metadata!.uid);
    // The init container did not run again: same container, same (old) image, no restart.
    expect(containerView(after, "setup")).toEqual(containerView(before, "setup"));
    expect(containerView(after, "setup")!.image).toBe(testImage("init"));
    expect(containerView(after, "app")).toEqual(containerView(before, "app"));
  });
});
