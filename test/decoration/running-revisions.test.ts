// What a pod runs of the revisions it records (DESIGN §10, "What pods run is what counts"):
// every injected part its spec shows, judged against the recorded revision's template, and
// whether what differs can be put back in place.
import { describe, expect, it } from "vitest";
import type { PodDecorationTemplate } from "../../src/api/poddecoration.ts";
import { revisionDrifts, runningRevisions, type RunningPod } from "../../src/decoration/running-revisions.ts";
import { rememberEnvFingerprint } from "../../src/decoration/env-fingerprint.ts";

const templates: Record<string, PodDecorationTemplate> = {
  "logging/l1": { containers: [{ name: "shipper", image: "shipper:1" }] },
  "logging/l2": { containers: [{ name: "shipper", image: "shipper:2" }] },
  "logging/l3": { containers: [{ name: "shipper", image: "shipper:2", env: [{ name: "LEVEL", value: "debug" }, { name: "POD", valueFrom: { fieldRef: { fieldPath: "metadata.name" } } }], volumeMounts: [{ name: "logs", mountPath: "/logs" }] }], volumes: [{ name: "logs", emptyDir: {} }] },
  "mesh/m1": { initContainers: [{ name: "proxy", image: "proxy:1", restartPolicy: "Always" }, { name: "setup", image: "setup:1" }] },
  "mesh/m2": { initContainers: [{ name: "proxy", image: "proxy:2", restartPolicy: "Always" }] },
  "override/o1": { containers: [{ name: "shipper", image: "shipper:9" }] },
  "env/e1": { primaryContainers: [{ env: [{ name: "A", value: "b" }] }] },
  "image/i1": { primaryContainers: [{ name: "app", image: "app:2" }] },
  "marks/k1": { metadata: [{ patchPolicy: "Overwrite", labels: { mesh: "on" }, annotations: { owner: "platform" } }, { labels: { team: "platform" } }] },
  "overrides-marks/k9": { metadata: [{ patchPolicy: "Overwrite", labels: { mesh: "off" } }] },
};
const template = (decoration: string, revision: string) => templates[`${decoration}/${revision}`];
const recorded = (entries: Record<string, string>) => new Map(Object.entries(entries));

/** A pod as rendered, recording `records`: with the labels recording them, and the given containers. */
function pod(records: Record<string, string>, containers: Record<string, string>, initContainers: Record<string, string> = {}, extra: { labels?: Record<string, string>; annotations?: Record<string, string> } = {}): RunningPod {
  const recordingLabels = Object.fromEntries(Object.entries(records).map(([name, revision]) => [`poddecoration.kusionstack.io/pd-${name}`, revision]));
  return {
    metadata: { labels: { ...recordingLabels, ...extra.labels }, annotations: extra.annotations ?? {} },
    spec: {
      containers: Object.entries(containers).map(([name, image]) => ({ name, image })),
      initContainers: Object.entries(initContainers).map(([name, image]) => ({ name, image })),
    },
  };
}

describe("runningRevisions", () => {
  it("keeps a record the pod's containers and native sidecars agree with", () => {
    const records = { logging: "l2", mesh: "m1" };
    expect(runningRevisions(pod(records, { shipper: "shipper:2", app: "app:1" }, { proxy: "proxy:1" }), recorded(records), template)).toEqual(recorded(records));
  });

  it("drops a record the pod's containers contradict: a claimed revision whose image does not run, or whose container is not there", () => {
    const records = { logging: "l2", mesh: "m2" };
    expect(runningRevisions(pod(records, { shipper: "shipper:1", app: "app:1" }, { proxy: "proxy:1" }), recorded(records), template)).toEqual(new Map());
    expect(runningRevisions(pod({ logging: "l1" }, { app: "app:1" }), recorded({ logging: "l1" }), template)).toEqual(new Map());
  });

  it("keeps what it cannot judge: a revision not stored, a container two recorded decorations inject", () => {
    expect(runningRevisions(pod({}, { app: "app:1" }), recorded({ logging: "l7" }), template)).toEqual(recorded({ logging: "l7" }));
    // A later decoration replaced the shipper by name: the pod runs the override's image.
    const records = { logging: "l1", override: "o1" };
    expect(runningRevisions(pod(records, { shipper: "shipper:9" }), recorded(records), template)).toEqual(recorded(records));
  });
});

describe("revisionDrifts", () => {
  it("finds an image set back, in place", () => {
    const records = { logging: "l2" };
    expect(revisionDrifts(pod(records, { shipper: "shipper:1", app: "app:1" }), recorded(records), template)).toEqual(new Map([["logging", { inPlace: true, details: ["container \"shipper\" runs image shipper:1, not shipper:2"] }]]));
  });

  it("finds a label removed, a label changed, an annotation removed and the recording label removed, all in place", () => {
    const records = { marks: "k1" };
    const drifted = pod(records, { app: "app:1" }, {}, { labels: { mesh: "off" } });
    drifted.metadata = { ...drifted.metadata, labels: { mesh: "off" } };
    expect(revisionDrifts(drifted, recorded(records), template).get("marks")).toEqual({
      inPlace: true,
      details: ['label "mesh" is "off", not "on"', 'label "team" is missing', 'annotation "owner" is missing', 'label "poddecoration.kusionstack.io/pd-marks" is missing, not "k1"'],
    });
    // Retain: the pod's own value stands.
    const kept = pod(records, { app: "app:1" }, {}, { labels: { mesh: "on", team: "shop" }, annotations: { owner: "platform" } });
    expect(revisionDrifts(kept, recorded(records), template).size).toBe(0);
  });

  it("leaves a label two recorded decorations set to neither", () => {
    const records = { marks: "k1", "overrides-marks": "k9" };
    const rendered = pod(records, { app: "app:1" }, {}, { labels: { mesh: "off", team: "platform" }, annotations: { owner: "platform" } });
    expect(revisionDrifts(rendered, recorded(records), template).size).toBe(0);
  });

  it("finds a forged record of a revision whose env, mounts or volumes the pod does not have: not in place", () => {
    const records = { logging: "l3" };
    const forged = pod(records, { shipper: "shipper:2", app: "app:1" });
    expect(revisionDrifts(forged, recorded(records), template).get("logging")).toEqual({
      inPlace: false,
      details: ['the env of container "shipper" is not the revision\'s', 'container "shipper" lacks the mounts at /logs', 'volume "logs" is missing'],
    });
  });

  it("reads env as the API server stores it, and from a cached pod that keeps only its fingerprint", () => {
    const records = { logging: "l3" };
    const env = [{ name: "LEVEL", value: "debug" }, { name: "POD", valueFrom: { fieldRef: { apiVersion: "v1", fieldPath: "metadata.name" } } }];
    const stored = pod(records, { app: "app:1" });
    stored.spec = { ...stored.spec, containers: [{ name: "shipper", image: "shipper:2", env, volumeMounts: [{ name: "logs", mountPath: "/logs" }] }, { name: "app", image: "app:1" }], volumes: [{ name: "logs" }] };
    expect(revisionDrifts(stored, recorded(records), template).size).toBe(0);
    const projected = { name: "shipper", image: "shipper:2", volumeMounts: [{ name: "logs", mountPath: "/logs" }] };
    rememberEnvFingerprint(projected, env);
    const cached = { ...stored, spec: { ...stored.spec, containers: [projected, { name: "app", image: "app:1" }] } };
    expect(revisionDrifts(cached, recorded(records), template).size).toBe(0);
  });

  it("finds a primary container's patched image set back, in place", () => {
    const records = { image: "i1" };
    expect(revisionDrifts(pod(records, { app: "app:1" }), recorded(records), template).get("image")).toEqual({ inPlace: true, details: ['container "app" runs image app:1, not app:2'] });
    expect(revisionDrifts(pod(records, { app: "app:2" }), recorded(records), template).size).toBe(0);
  });
});
