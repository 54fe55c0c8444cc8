import { describe, expect, it } from "vitest";
import type { PodDecorationTemplate } from "../../src/api/poddecoration.ts";
import { runningRevisions } from "../../src/decoration/running-revisions.ts";

const templates: Record<string, PodDecorationTemplate> = {
  "logging/l1": { containers: [{ name: "shipper", image: "shipper:1" }] },
  "logging/l2": { containers: [{ name: "shipper", image: "shipper:2" }] },
  "mesh/m1": { initContainers: [{ name: "proxy", image: "proxy:1", restartPolicy: "Always" }, { name: "setup", image: "setup:1" }] },
  "mesh/m2": { initContainers: [{ name: "proxy", image: "proxy:2", restartPolicy: "Always" }] },
  "override/o1": { containers: [{ name: "shipper", image: "shipper:9" }] },
  "env/e1": { primaryContainers: [{ env: [{ name: "A", value: "b" }] }] },
};
const template = (decoration: string, revision: string) => templates[`${decoration}/${revision}`];
const recorded = (entries: Record<string, string>) => new Map(Object.entries(entries));
const pod = (containers: Record<string, string>, initContainers: Record<string, string> = {}) => ({
  spec: {
    containers: Object.entries(containers).map(([name, image]) => ({ name, image })),
    initContainers: Object.entries(initContainers).map(([name, image]) => ({ name, image })),
  },
});

describe("runningRevisions", () => {
  it("keeps a record the pod's containers and native sidecars agree with", () => {
    expect(runningRevisions(pod({ shipper: "shipper:2", app: "app:1" }, { proxy: "proxy:1" }), recorded({ logging: "l2", mesh: "m1" }), template)).toEqual(recorded({ logging: "l2", mesh: "m1" }));
  });

  it("drops a record the pod's containers contradict: a claimed revision whose image does not run, or whose container is not there", () => {
    expect(runningRevisions(pod({ shipper: "shipper:1", app: "app:1" }, { proxy: "proxy:1" }), recorded({ logging: "l2", mesh: "m2" }), template)).toEqual(new Map());
    expect(runningRevisions(pod({ app: "app:1" }), recorded({ logging: "l1" }), template)).toEqual(new Map());
  });

  it("keeps what it cannot judge: a revision not stored, a template injecting no container, a container two recorded decorations inject", () => {
    expect(runningRevisions(pod({ app: "app:1" }), recorded({ logging: "l7", env: "e1" }), template)).toEqual(recorded({ logging: "l7", env: "e1" }));
    // A later decoration replaced the shipper by name: the pod runs the override's image.
    expect(runningRevisions(pod({ shipper: "shipper:9" }), recorded({ logging: "l1", override: "o1" }), template)).toEqual(recorded({ logging: "l1", override: "o1" }));
  });
});
