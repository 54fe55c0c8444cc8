// The index of which ClusterPodDecorations select each namespace (DESIGN §12): from the namespace
// informer's labels, worked out again only when a namespace or a cluster decoration changes, the
// webhook's scope applied; a namespace labelled out keeps what its pods carry, a deleted
// decoration does not.
import { describe, expect, it } from "vitest";
import type { ClusterPodDecoration } from "../../src/api/cluster-poddecoration.ts";
import { ClusterDecorations, type CachedClusterDecoration } from "../../src/controller/cluster-decorations.ts";
import { admissionScope } from "../../src/decoration/admission-scope.ts";
import type { Namespace } from "../../src/kube/objects.ts";

function cpd(name: string, namespaceSelector: ClusterPodDecoration["spec"]["namespaceSelector"], deleting = false): CachedClusterDecoration {
  return {
    apiVersion: "pod-decorator.io/v1alpha1",
    kind: "ClusterPodDecoration",
    metadata: { name, uid: name, resourceVersion: "1", ...(deleting ? { deletionTimestamp: "2026-01-02T00:00:00Z" } : {}) },
    spec: { namespaceSelector, selector: {} },
  };
}

const namespace = (name: string, labels: Record<string, string> = {}): Namespace => ({ apiVersion: "v1", kind: "Namespace", metadata: { name, labels } });

/** An index over caches the test replaces objects in, as informers do. */
function world(decorations: CachedClusterDecoration[], namespaces: Namespace[], scope?: Parameters<typeof admissionScope>[0]) {
  const state = { decorations, namespaces };
  let lists = 0;
  const index = new ClusterDecorations({
    decorations: { list: () => (lists++, state.decorations) },
    namespaces: { get: (_namespace, name) => state.namespaces.find((candidate) => candidate.metadata?.name === name), list: () => state.namespaces },
    ...(scope === undefined ? {} : { scope: admissionScope(scope) }),
  });
  return { index, state, lists: () => lists };
}

const names = (decorations: readonly { metadata: { name?: string; namespace?: string } }[]) => decorations.map((decoration) => `${decoration.metadata.name}@${decoration.metadata.namespace}`);

describe("which ClusterPodDecorations select a namespace", () => {
  it("selects by the namespace's labels and its name label, each as seen from the namespace", () => {
    const { index } = world([cpd("mesh", { matchLabels: { mesh: "enabled" } }), cpd("by-name", { matchLabels: { "kubernetes.io/metadata.name": "shop" } }), cpd("all", {})], [namespace("shop", { mesh: "enabled" }), namespace("blog")]);
    expect(names(index.forNamespace("shop"))).toEqual(["mesh@shop", "by-name@shop", "all@shop"]);
    expect(names(index.forNamespace("blog"))).toEqual(["all@blog"]);
    // A namespace the informer does not know is selected by none.
    expect(index.forNamespace("unknown")).toEqual([]);
    expect(index.selectedNamespaces(cpd("mesh", { matchLabels: { mesh: "enabled" } }))).toEqual(["shop"]);
  });

  it("works a namespace out again only when the namespace or a decoration changed, handing out the same objects until then", () => {
    const { index, state, lists } = world([cpd("mesh", { matchLabels: { mesh: "enabled" } })], [namespace("shop", { mesh: "enabled" })]);
    const first = index.forNamespace("shop");
    expect(index.forNamespace("shop")).toBe(first);
    expect(lists()).toBe(1);
    // Labelled out: a new namespace object in the cache.
    state.namespaces = [namespace("shop", {})];
    expect(index.forNamespace("shop")).toEqual([]);
    state.namespaces = [namespace("shop", { mesh: "enabled" })];
    const again = index.forNamespace("shop");
    expect(names(again)).toEqual(["mesh@shop"]);
    // A decoration added: the index is told, and lists the decorations once more.
    state.decorations = [...state.decorations, cpd("logging", {})];
    expect(index.forNamespace("shop")).toBe(again);
    index.changed();
    expect(names(index.forNamespace("shop"))).toEqual(["mesh@shop", "logging@shop"]);
    expect(lists()).toBe(2);
  });

  it("selects nothing outside the pod webhook's scope, not even with {}", () => {
    const { index } = world([cpd("all", {})], [namespace("shop"), namespace("kube-system"), namespace("quiet", { "poddecoration.kusionstack.io/injection": "disabled" })], { excludedNamespaces: ["kube-system"] });
    expect(names(index.forNamespace("shop"))).toEqual(["all@shop"]);
    expect(index.forNamespace("kube-system")).toEqual([]);
    expect(index.forNamespace("quiet")).toEqual([]);
  });

  it("keeps what a labelled-out namespace's pods carry, while the decoration exists and is not being deleted", () => {
    const { index, state } = world([cpd("mesh", { matchLabels: { mesh: "enabled" } })], [namespace("shop", {})]);
    expect(index.keeps("ClusterPodDecoration/mesh", "shop")).toBe(true);
    // A PodDecoration of that name is another decoration: nothing kept for it here.
    expect(index.keeps("mesh", "shop")).toBe(false);
    state.namespaces = [namespace("shop", { mesh: "enabled" })];
    expect(index.keeps("ClusterPodDecoration/mesh", "shop")).toBe(false);
    state.namespaces = [namespace("shop", {})];
    state.decorations = [cpd("mesh", { matchLabels: { mesh: "enabled" } }, true)];
    index.changed();
    expect(index.keeps("ClusterPodDecoration/mesh", "shop")).toBe(false);
    state.decorations = [];
    index.changed();
    expect(index.keeps("ClusterPodDecoration/mesh", "shop")).toBe(false);
  });
});
