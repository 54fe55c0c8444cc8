// ClusterPodDecorations in the engine (DESIGN §12): ordered with a namespace's PodDecorations by
// group, weight, age, name and then kind; recorded apart from them, so a ClusterPodDecoration
// `mesh` and a PodDecoration `mesh` are two decorations; idempotent; a pod author's records of
// either kind decide nothing.
import { describe, expect, it } from "vitest";
import type { Pod } from "../../src/api/pod.ts";
import type { PodDecoration } from "../../src/api/poddecoration.ts";
import { decoratePod, liveRevision } from "../../src/decoration/decorate.ts";
import { CLUSTER_REVISIONS_ANNOTATION, recordedRevisions, REVISIONS_ANNOTATION } from "../../src/decoration/recording.ts";
import { specRevision } from "../../src/revision/revision-data.ts";
import { asSeenFrom, type ClusterPodDecoration } from "../../src/api/cluster-poddecoration.ts";
import { withoutRecording } from "../../src/webhook/requester-trust.ts";

const NAMESPACE = "shop";

function namespaced(name: string, image: string, created = "2026-01-01T00:00:00Z", extra: Partial<PodDecoration["spec"]> = {}): PodDecoration {
  return { apiVersion: "apps.kusionstack.io/v1alpha1", kind: "PodDecoration", metadata: { name, namespace: NAMESPACE, creationTimestamp: created }, spec: { selector: {}, template: { containers: [{ name: `${name}-from-pd`, image }] }, ...extra } };
}

function cluster(name: string, image: string, created = "2026-01-01T00:00:00Z", extra: Partial<ClusterPodDecoration["spec"]> = {}): PodDecoration {
  const cpd: ClusterPodDecoration = {
    apiVersion: "pod-decorator.io/v1alpha1",
    kind: "ClusterPodDecoration",
    metadata: { name, creationTimestamp: created },
    spec: { namespaceSelector: {}, selector: {}, template: { containers: [{ name: `${name}-from-cpd`, image }] }, ...extra },
  };
  return asSeenFrom(cpd, NAMESPACE);
}

const pod = (): Pod => ({ apiVersion: "v1", kind: "Pod", metadata: { name: "web-0", namespace: NAMESPACE, labels: { app: "web" } }, spec: { containers: [{ name: "app", image: "app:1" }] } });

describe("cluster and namespaced decorations in one render", () => {
  it("keeps a ClusterPodDecoration and a PodDecoration of one name apart, each recorded where its kind is", () => {
    const mine = namespaced("mesh", "team/proxy:1");
    const platform = cluster("mesh", "platform/proxy:1");
    const result = decoratePod(pod(), [mine, platform], liveRevision);
    expect(result.applied.map((applied) => applied.name)).toEqual(["mesh", "ClusterPodDecoration/mesh"]);
    expect(result.pod.spec?.containers.map((container) => container.name)).toEqual(["mesh-from-pd", "mesh-from-cpd", "app"]);
    expect(JSON.parse(result.pod.metadata!.annotations![REVISIONS_ANNOTATION]!)).toEqual([{ name: "mesh", revision: specRevision(mine).name }]);
    expect(JSON.parse(result.pod.metadata!.annotations![CLUSTER_REVISIONS_ANNOTATION]!)).toEqual([{ name: "mesh", revision: specRevision(platform).name }]);
    expect(result.pod.metadata?.labels).toMatchObject({ "poddecoration.kusionstack.io/pd-mesh": specRevision(mine).name, "pod-decorator.io/cpd-mesh": specRevision(platform).name });
    expect(specRevision(platform).name).toMatch(/^cpd-mesh-/);
    expect(recordedRevisions(result.pod)).toEqual(new Map([["mesh", specRevision(mine).name], ["ClusterPodDecoration/mesh", specRevision(platform).name]]));
    // Rendered again, nothing changes.
    expect(decoratePod(result.pod, [mine, platform], liveRevision).applied).toEqual([]);
  });

  it("orders across kinds by group, weight, age and name, then kind: the cluster one last on a full tie", () => {
    const early = cluster("b-platform", "p:1", "2026-01-01T00:00:00Z");
    const late = namespaced("a-team", "t:1", "2026-02-01T00:00:00Z");
    expect(decoratePod(pod(), [late, early], liveRevision).applied.map((applied) => applied.name)).toEqual(["ClusterPodDecoration/b-platform", "a-team"]);
    const tied = [cluster("same", "p:1"), namespaced("same", "t:1")];
    expect(decoratePod(pod(), tied, liveRevision).applied.map((applied) => applied.name)).toEqual(["same", "ClusterPodDecoration/same"]);
    const heavier = cluster("z", "p:1", "2026-01-01T00:00:00Z", { injectStrategy: { weight: 5 } });
    expect(decoratePod(pod(), [heavier, namespaced("y", "t:1", "2026-03-01T00:00:00Z")], liveRevision).applied.map((applied) => applied.name)).toEqual(["y", "ClusterPodDecoration/z"]);
  });

  it("decides a shared exclusive group across kinds by weight", () => {
    const platform = cluster("mesh", "p:1", "2026-01-01T00:00:00Z", { injectStrategy: { group: "mesh", weight: 10 } });
    const team = namespaced("team-mesh", "t:1", "2026-01-01T00:00:00Z", { injectStrategy: { group: "mesh", weight: 1 } });
    expect(decoratePod(pod(), [team, platform], liveRevision).applied.map((applied) => applied.name)).toEqual(["ClusterPodDecoration/mesh"]);
  });

  it("names a cluster decoration as one in warnings and errors", () => {
    const result = decoratePod(pod(), [cluster("mesh", "p:1")], () => undefined);
    expect(result.warnings).toEqual(["ClusterPodDecoration/mesh: no revision is known yet; not applied"]);
  });

  it("lets a pod's author claim no cluster decoration: its records and labels are bookkeeping", () => {
    const forged = { labels: { app: "web", "pod-decorator.io/cpd-mesh": "cpd-mesh-old" }, annotations: { [CLUSTER_REVISIONS_ANNOTATION]: '[{"name":"mesh","revision":"cpd-mesh-old"}]', note: "kept" } };
    expect(withoutRecording(forged)).toEqual({ labels: { app: "web" }, annotations: { note: "kept" } });
  });
});
