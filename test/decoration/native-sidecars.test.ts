// Where injected init containers go: native sidecars (restartPolicy Always) ahead of the pod's
// own init containers, in the decorations' order; regular ones after the pod's own.
import { describe, expect, it } from "vitest";
import type { Pod } from "../../src/api/pod.ts";
import type { PodDecorationTemplate } from "../../src/api/poddecoration.ts";
import { renderPod, type DecorationToApply } from "../../src/decoration/render.ts";

const decoration = (name: string, weight: number, template: PodDecorationTemplate): DecorationToApply => ({ name, revisionName: `${name}-1`, template, injectStrategy: { weight } });

const pod: Pod = {
  metadata: { name: "p", namespace: "shop" },
  spec: {
    initContainers: [{ name: "migrate", image: "app:1" }, { name: "own-sidecar", image: "x:1", restartPolicy: "Always" }],
    containers: [{ name: "app", image: "app:1" }],
  },
};

describe("injected init containers", () => {
  it("puts native sidecars before the pod's own init containers, in the decorations' order, and regular ones after", () => {
    // The decorations' stable order: group, weight (ascending), age, name: logs renders first.
    const mesh = decoration("mesh", 10, { initContainers: [{ name: "proxy", image: "proxy:1", restartPolicy: "Always" }, { name: "mesh-init", image: "init:1" }] });
    const logs = decoration("logs", 5, { initContainers: [{ name: "log-agent", image: "logger:1", restartPolicy: "Always" }, { name: "log-setup", image: "init:1" }] });
    const rendered = renderPod(pod, [logs, mesh]);
    expect(rendered.pod.spec!.initContainers!.map((container) => container.name)).toEqual(["log-agent", "proxy", "migrate", "own-sidecar", "log-setup", "mesh-init"]);
    // The same whichever order the decorations are given in.
    expect(renderPod(pod, [mesh, logs]).pod.spec!.initContainers).toEqual(rendered.pod.spec!.initContainers);
  });

  it("keeps the pod's container when a native sidecar's name is taken, with a warning", () => {
    const rendered = renderPod(pod, [decoration("mesh", 0, { initContainers: [{ name: "migrate", image: "proxy:1", restartPolicy: "Always" }] })]);
    expect(rendered.pod.spec!.initContainers).toEqual(pod.spec!.initContainers);
    expect(rendered.warnings).toEqual(["PodDecoration/mesh: template.initContainers[0]: the pod already has a container named migrate; the pod's is kept"]);
  });
});
