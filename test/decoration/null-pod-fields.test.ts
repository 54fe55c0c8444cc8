// The engine never throws on null in the pod fields it reads: a null field is an absent one
// (DESIGN §10), and a null list item is carried through where it is, never read.
import { describe, expect, it } from "vitest";
import type { Pod } from "../../src/api/pod.ts";
import type { PodDecorationTemplate } from "../../src/api/poddecoration.ts";
import { renderPod } from "../../src/decoration/render.ts";

// Touches every part of the pod the renderer reads.
const template: PodDecorationTemplate = {
  metadata: [{ patchPolicy: "Overwrite", labels: { team: "sre" }, annotations: { note: "x" } }, { patchPolicy: "MergePatchJson", annotations: { config: '{"a":1}' } }],
  initContainers: [{ name: "init", image: "registry.k8s.io/pause:3.10" }],
  primaryContainers: [{ targetPolicy: "All", image: "example.com/app:2", env: [{ name: "A", value: "1" }], volumeMounts: [{ name: "data", mountPath: "/data" }] }],
  containers: [{ name: "log", image: "registry.k8s.io/pause:3.10" }],
  volumes: [{ name: "data", emptyDir: {} }],
  affinity: { overrideAffinity: { podAntiAffinity: {} }, nodeSelectorTerms: [{ matchExpressions: [{ key: "zone", operator: "In", values: ["a"] }] }] },
  tolerations: [{ key: "dedicated", operator: "Exists" }],
  runtimeClassName: "kata",
};

const render = (pod: unknown) => renderPod(pod as Pod, [{ name: "all", revisionName: "all-1", template, injectStrategy: {} }]);

describe("rendering into a pod with null fields", () => {
  const nullFields = (): unknown => ({
    metadata: { name: "p", namespace: "shop", labels: null, annotations: null },
    spec: {
      initContainers: null,
      containers: [{ name: "app", image: "example.com/app:1", env: null, volumeMounts: null }],
      volumes: null,
      affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: null }, podAffinity: null },
      tolerations: null,
      runtimeClassName: null,
    },
  });
  const absentFields = (): unknown => ({
    metadata: { name: "p", namespace: "shop" },
    spec: { containers: [{ name: "app", image: "example.com/app:1" }], affinity: { nodeAffinity: {} } },
  });

  it("renders as if the null fields were absent", () => {
    const withNulls = render(nullFields());
    const without = render(absentFields());
    expect(withNulls.pod).toEqual(without.pod);
    expect(withNulls.warnings).toEqual(without.warnings);
  });

  it("reads a null label value as the empty string, as the API server decodes it", () => {
    const pod = absentFields() as Pod;
    (pod.metadata!.labels as Record<string, unknown>) = { track: null };
    expect(render(pod).pod.metadata?.labels?.track).toBe("");
  });

  it("carries null list items through without reading them", () => {
    const pod = {
      metadata: { name: "p", namespace: "shop", annotations: { config: null } },
      spec: {
        initContainers: [null],
        containers: [null, { name: "app", image: "example.com/app:1", env: [null, { name: "A", value: "0" }], volumeMounts: [null] }],
        volumes: [null],
        affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [null, { matchExpressions: [{ key: "pool", operator: "Exists" }] }] } } },
        tolerations: [null],
      },
    };
    const { pod: rendered } = render(pod);
    const spec = rendered.spec!;
    expect(spec.initContainers).toEqual([null, template.initContainers![0]]);
    expect(spec.containers[0]).toBeNull();
    expect(spec.containers.map((container) => (container as { name?: string } | null)?.name)).toEqual([undefined, "log", "app"]);
    expect(spec.containers[2]?.env).toEqual([null, { name: "A", value: "1" }]);
    expect(spec.containers[2]?.volumeMounts).toEqual([null, { name: "data", mountPath: "/data" }]);
    expect(spec.volumes).toEqual([null, { name: "data", emptyDir: {} }]);
    expect(spec.tolerations).toEqual([null, { key: "dedicated", operator: "Exists" }]);
    expect(spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms).toEqual([
      null,
      { matchExpressions: [{ key: "pool", operator: "Exists" }, { key: "zone", operator: "In", values: ["a"] }] },
    ]);
    // A null annotation decodes to "", which holds nothing to merge into: the value is written.
    expect(rendered.metadata?.annotations?.config).toBe('{"a":1}');
  });
});
