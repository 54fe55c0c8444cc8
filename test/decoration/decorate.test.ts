// The engine's contract with its callers beyond what the golden files show: revisions come
// from the caller, unknown revisions are skipped, order does not depend on input order, and
// recorded groups stay settled even when their decoration no longer matches.
import { describe, expect, it } from "vitest";
import type { Pod } from "../../src/api/pod.ts";
import type { PodDecoration } from "../../src/api/poddecoration.ts";
import { decoratePod, liveRevision } from "../../src/decoration/decorate.ts";
import { REVISIONS_ANNOTATION } from "../../src/decoration/recording.ts";
import { renderPod } from "../../src/decoration/render.ts";
import { selectDecorations } from "../../src/decoration/selection.ts";

const pod = (): Pod => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name: "web-0", namespace: "shop", labels: { app: "web" } },
  spec: { containers: [{ name: "app", image: "registry.k8s.io/pause:3.10" }] },
});

function decoration(name: string, sidecarImage: string, extra: Partial<PodDecoration["spec"]> = {}, selector: PodDecoration["spec"]["selector"] = {}): PodDecoration {
  return {
    apiVersion: "apps.kusionstack.io/v1alpha1",
    kind: "PodDecoration",
    metadata: { name, namespace: "shop" },
    spec: { selector, template: { containers: [{ name, image: sidecarImage }] }, ...extra },
  };
}

describe("decoratePod", () => {
  it("renders the revision the caller chose, not the live spec", () => {
    const live = decoration("proxy", "example.com/proxy:2");
    const result = decoratePod(pod(), [live], () => ({ revisionName: "proxy-old", template: { containers: [{ name: "proxy", image: "example.com/proxy:1" }] }, injectStrategy: {} }));
    expect(result.pod.spec?.containers.map((container) => container.image)).toEqual(["example.com/proxy:1", "registry.k8s.io/pause:3.10"]);
    expect(result.applied).toEqual([{ name: "proxy", revision: "proxy-old" }]);
    expect(result.pod.metadata?.annotations?.[REVISIONS_ANNOTATION]).toBe('[{"name":"proxy","revision":"proxy-old"}]');
  });

  it("skips a decoration whose revision is not known, with a warning", () => {
    const result = decoratePod(pod(), [decoration("a", "x:1"), decoration("b", "x:2")], (pd) => (pd.metadata.name === "a" ? undefined : liveRevision(pd)));
    expect(result.applied.map((item) => item.name)).toEqual(["b"]);
    expect(result.warnings).toEqual(["PodDecoration/a: no revision is known yet; not applied"]);
  });

  it("keeps a recorded decoration's group settled after the decoration stops matching", () => {
    const recorded = pod();
    recorded.metadata!.annotations = { [REVISIONS_ANNOTATION]: '[{"name":"old","revision":"old-1"}]' };
    const old = decoration("old", "x:1", { injectStrategy: { group: "g", weight: 1 } }, { matchLabels: { app: "gone" } });
    const newer = decoration("newer", "x:2", { injectStrategy: { group: "g", weight: 5 } });
    const selection = selectDecorations(recorded, [old, newer]);
    expect(selection.apply).toEqual([]);
    expect(selection.excluded.map((item) => [item.decoration.metadata.name, item.reason])).toEqual([["old", "selector"], ["newer", "already-applied"]]);
  });

  it("renders the valid decorations of a namespace that also holds malformed ones", () => {
    // As a cache can hold them when they were written before any validation was installed.
    const malformed = [
      { ...decoration("no-selector", "x:1"), spec: { template: { containers: [{ name: "no-selector", image: "x:1" }] } } },
      decoration("string-selector", "x:1", {}, "app=web" as unknown as PodDecoration["spec"]["selector"]),
      decoration("object-expressions", "x:1", {}, { matchExpressions: { key: "app", operator: "Exists" } } as unknown as PodDecoration["spec"]["selector"]),
    ] as PodDecoration[];
    const result = decoratePod(pod(), [...malformed, decoration("ok", "x:1")], liveRevision);
    expect(result.applied.map((item) => item.name)).toEqual(["ok"]);
    expect(result.excluded.map((item) => [item.decoration.metadata.name, item.reason])).toEqual([["no-selector", "selector"], ["object-expressions", "selector"], ["string-selector", "selector"]]);
  });

  it("lists exclusions in rendering order with one reason each", () => {
    const other = decoration("elsewhere", "x:1");
    other.metadata.namespace = "billing";
    const deleting = decoration("deleting", "x:1");
    deleting.metadata.deletionTimestamp = "2024-01-01T00:00:00Z";
    const result = decoratePod(pod(), [other, deleting, decoration("ok", "x:1")], liveRevision);
    expect(result.excluded.map((item) => [item.decoration.metadata.name, item.reason])).toEqual([["deleting", "deleting"], ["elsewhere", "namespace"]]);
  });
});

describe("renderPod", () => {
  const item = (name: string, weight: number, creationTimestamp?: string) => ({
    name,
    creationTimestamp,
    revisionName: `${name}-r`,
    template: { containers: [{ name, image: "x:1", injectPolicy: "AfterPrimaryContainer" as const }] },
    injectStrategy: { weight },
  });

  it("renders in DESIGN order whatever order it is given", () => {
    const items = [item("c", 0, "2024-01-02T00:00:00Z"), item("a", 1), item("b", 0, "2024-01-01T00:00:00Z"), item("d", -1)];
    const forward = renderPod(pod(), items);
    const backward = renderPod(pod(), [...items].reverse());
    expect(forward.applied.map((applied) => applied.name)).toEqual(["d", "b", "c", "a"]);
    expect(backward).toEqual(forward);
    expect(forward.pod.spec?.containers.map((container) => container.name)).toEqual(["app", "d", "b", "c", "a"]);
  });

  it("returns the pod as read, unrecorded, when there is nothing to render", () => {
    const input = pod();
    const result = renderPod(input, []);
    expect(result.pod).toBe(input);
    expect(result.warnings).toEqual([]);
  });

  it("shares what it did not render into with the pod, and replaces what it did", () => {
    const input = pod();
    const template = { containers: [{ name: "side", image: "x:1" }], tolerations: [{ key: "k", operator: "Exists" as const }] };
    const result = renderPod(input, [{ name: "s", revisionName: "s-r", template, injectStrategy: {} }]);
    expect(result.pod.spec!.containers.find((container) => container.name === "app")).toBe(input.spec!.containers[0]);
    expect(result.pod.spec!.containers).not.toBe(input.spec!.containers);
    expect(result.pod.metadata!.labels).not.toBe(input.metadata!.labels);
    expect(input).toEqual(pod());
  });

  it("shares no objects with the templates it rendered", () => {
    const template = { containers: [{ name: "side", image: "x:1", env: [{ name: "A", value: "1" }] }] };
    const result = renderPod(pod(), [{ name: "s", revisionName: "s-r", template, injectStrategy: {} }]);
    result.pod.spec!.containers[0]!.env![0]!.value = "changed";
    expect(template.containers[0]!.env[0]!.value).toBe("1");
  });

  it("writes no label for a revision that cannot be a label value, and says so", () => {
    const result = renderPod(pod(), [{ name: "s", revisionName: "Not a label value!", template: {}, injectStrategy: {} }]);
    expect(result.pod.metadata?.labels).toEqual({ app: "web" });
    expect(result.warnings).toEqual(['PodDecoration/s: revision "Not a label value!" is not a valid label value; no label recorded']);
  });
});
