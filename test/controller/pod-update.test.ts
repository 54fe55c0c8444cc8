import jsonpatch from "fast-json-patch";
import { describe, expect, it } from "vitest";
import { podUpdate, RESTARTED_CONTAINERS_ANNOTATION } from "../../src/controller/pod-update.ts";
import { runsSpecImages } from "../../src/controller/pod-availability.ts";
import { slotPod } from "../../src/controller/collaset/slot-pod.ts";
import { collaSet, pod, sidecarRevision, sources, template } from "./collaset/fixtures.ts";

const revisions = sources(
  { r1: template("nginx:1.27"), r2: template("nginx:1.28"), r3: template("nginx:1.27", "green") },
  [sidecarRevision("logging", "l1", "fluent-bit:1"), sidecarRevision("logging", "l2", "fluent-bit:2"), sidecarRevision("mesh", "m1", "envoy:1")],
);
const render = (templateRevision: string, decorations: Record<string, string> = {}) =>
  slotPod(collaSet(), 0, { template: templateRevision, decorations: new Map(Object.entries(decorations)) }, revisions)!;

describe("podUpdate", () => {
  it("changes images and the recorded revisions in place, guarded by the resourceVersion", () => {
    const from = render("r1", { logging: "l1" });
    const live = { ...pod("web-x", { id: 0, template: "r1", decorations: { logging: "l1" }, images: { "logging-sidecar": "fluent-bit:1", app: "nginx:1.27" } }) };
    live.metadata!.labels!["team"] = "shop";
    const update = podUpdate(live, from, render("r2", { logging: "l2" }));
    expect(update.kind).toBe("in-place");
    const operations = update.kind === "in-place" ? update.operations : [];
    expect(operations[0]).toEqual({ op: "test", path: "/metadata/resourceVersion", value: "7" });
    const patched = jsonpatch.applyPatch(structuredClone(live), operations as jsonpatch.Operation[], true, false).newDocument;
    expect(patched.spec!.containers.map((container) => container.image)).toEqual(["fluent-bit:2", "nginx:1.28"]);
    expect(patched.metadata!.labels).toMatchObject({ "controller-revision-hash": "r2", "poddecoration.kusionstack.io/pd-logging": "l2", team: "shop" });
    expect(patched.metadata!.annotations!["poddecoration.kusionstack.io/revisions"]).toBe('[{"name":"logging","revision":"l2"}]');
  });

  it("removes a decoration's metadata in place when only metadata goes, and escapes label keys", () => {
    const from = render("r1", { logging: "l1" });
    const to = render("r1");
    const live = pod("web-x", { id: 0, template: "r1", decorations: { logging: "l1" } });
    live.metadata!.labels!["poddecoration.kusionstack.io/pd-logging"] = "l1";
    // The sidecar itself is a container: removing it is not possible in place.
    expect(podUpdate(live, from, to)).toMatchObject({ kind: "recreate" });
    const labelsOnly = podUpdate(live, { ...from, spec: to.spec }, to);
    expect(labelsOnly.kind).toBe("in-place");
    expect(labelsOnly.kind === "in-place" ? labelsOnly.operations : []).toContainEqual({ op: "remove", path: "/metadata/labels/poddecoration.kusionstack.io~1pd-logging" });
  });

  it("recreates for a new container, an env change, or when what the pod records is no longer stored", () => {
    const live = pod("web-x", { id: 0, template: "r1" });
    expect(podUpdate(live, render("r1"), render("r1", { mesh: "m1" }))).toMatchObject({ kind: "recreate" });
    expect(podUpdate(live, render("r1"), render("r3"))).toMatchObject({ kind: "recreate", reason: "the change is more than metadata and the images of containers and native sidecars" });
    expect(podUpdate(live, undefined, render("r2"))).toMatchObject({ kind: "recreate", reason: "a revision the pod records is no longer stored" });
  });

  describe("init containers, as the kubelet treats them", () => {
    const initRevisions = sources({ r1: template("nginx:1.27") }, [
      sidecarRevision("mesh", "m1", "", { template: { initContainers: [{ name: "proxy", image: "envoy:1", restartPolicy: "Always" }] } }),
      sidecarRevision("mesh", "m2", "", { template: { initContainers: [{ name: "proxy", image: "envoy:2", restartPolicy: "Always" }] } }),
      sidecarRevision("setup", "s1", "", { template: { initContainers: [{ name: "migrate", image: "migrate:1" }] } }),
      sidecarRevision("setup", "s2", "", { template: { initContainers: [{ name: "migrate", image: "migrate:2" }] } }),
    ]);
    const renderInit = (decorations: Record<string, string>) =>
      slotPod(collaSet(), 0, { template: "r1", decorations: new Map(Object.entries(decorations)) }, initRevisions)!;
    const live = (decorations: Record<string, string>) => {
      const current = pod("web-x", { id: 0, template: "r1", decorations });
      const initContainers = (renderInit(decorations).spec?.initContainers ?? []).map(({ name, image, restartPolicy }) => ({ name, image, ...(restartPolicy === undefined ? {} : { restartPolicy }) }));
      current.spec = { ...current.spec!, initContainers };
      return current;
    };

    it("changes a native sidecar's image in place (the kubelet restarts only it)", () => {
      const update = podUpdate(live({ mesh: "m1" }), renderInit({ mesh: "m1" }), renderInit({ mesh: "m2" }));
      expect(update.kind).toBe("in-place");
      expect(update.kind === "in-place" ? update.operations : []).toContainEqual({ op: "replace", path: "/spec/initContainers/0/image", value: "envoy:2" });
    });

    it("recreates for a regular init container's image (the kubelet never runs it on a live pod)", () => {
      expect(podUpdate(live({ setup: "s1" }), renderInit({ setup: "s1" }), renderInit({ setup: "s2" }))).toMatchObject({ kind: "recreate" });
    });

    it("counts a native sidecar still on its old image as an update in progress", () => {
      const before = live({ mesh: "m1" });
      before.status = { ...before.status, initContainerStatuses: [{ name: "proxy", image: "envoy:1", imageID: "sha256:e1", containerID: "containerd://proxy-1", ready: true, restartCount: 0 }] };
      const update = podUpdate(before, renderInit({ mesh: "m1" }), renderInit({ mesh: "m2" }));
      // The update records which container it restarts, and which one ran before.
      const updating = jsonpatch.applyPatch(structuredClone(before), update.kind === "in-place" ? update.operations : [], true, false).newDocument;
      expect(JSON.parse(updating.metadata?.annotations?.[RESTARTED_CONTAINERS_ANNOTATION] ?? "{}")).toEqual({ proxy: "containerd://proxy-1" });
      expect(runsSpecImages(updating)).toBe(false);
      updating.status!.initContainerStatuses = [{ name: "proxy", image: "docker.io/library/envoy:2", imageID: "sha256:e2", containerID: "containerd://proxy-2", ready: true, restartCount: 1 }];
      expect(runsSpecImages(updating)).toBe(true);
      // The runtime may name the new image by another of its tags: the restart is what tells.
      updating.status!.initContainerStatuses = [{ name: "proxy", image: "envoy:2-alias", imageID: "sha256:e2", containerID: "containerd://proxy-2", ready: true, restartCount: 1 }];
      expect(runsSpecImages(updating)).toBe(true);
    });

    it("counts a container the controller never changed in place as running its spec, whatever tag the runtime reports", () => {
      const created = live({ mesh: "m2" });
      created.status = { ...created.status, initContainerStatuses: [{ name: "proxy", image: "envoy:first-tag-of-the-same-image", imageID: "sha256:e2", containerID: "containerd://proxy-1", ready: true, restartCount: 0 }] };
      expect(runsSpecImages(created)).toBe(true);
    });
  });
});
