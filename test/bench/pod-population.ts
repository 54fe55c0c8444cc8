// The controller benchmarks' world: one namespace with D PodDecorations and N pods made from
// the pod captured from the real API server (fixtures/pod.json: status, managedFields, owner,
// sidecars, service-account volume), each with its own name, uid, labels, owner, node, IPs,
// service-account volume and container ids. Pods belong to W workloads: 40% CollaSet, 50%
// Deployment, 10% bare pods. Their decorations are recorded by the engine itself
// (decoratePod), as the webhook does at creation. The decorations each pod matches (W = 50,
// D = 100 is the DESIGN §9 world; 1,000 workloads and 1,000 decorations the 100k-pod one):
//   pd-000..pd-001          every pod (a mesh, a log shipper)
//   pd-002..pd-009          the pods of one of 8 tiers
//   the next 5/9 of them    the pods of one workload
//   the rest                the canary pods of one workload (none now: scanned, never matched)
// so about 4 per pod. One (pod, decoration) pair in 10 is still on the decoration's previous
// revision (a rollout under way), 1 pod in 100 escaped the webhook (no annotation), 1 in 20 is
// not ready, and 1 bare pod in 10 has succeeded. Pods that differ only in what is unique to a
// pod are rendered once and stamped (names, uids, IPs, ids), so 100,000 pods take seconds.
// The fleet's world (issue 38, `fleet`): the workloads spread over N namespaces (workload w in
// namespace w mod N), all labelled alike, and one ClusterPodDecoration selecting every one of
// them and every pod in them, recorded by the engine as the webhook records it (beside the
// namespaced decorations, if any), with the same share of pods on its previous revision.
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { asSeenFrom, defaultClusterPodDecoration, type ClusterPodDecoration } from "../../src/api/cluster-poddecoration.ts";
import { CLUSTER_POD_DECORATION_KIND, OWN_API_VERSION } from "../../src/api/group.ts";
import { defaultPodDecoration, type PodDecoration } from "../../src/api/poddecoration.ts";
import { NAMESPACE_NAME_LABEL } from "../../src/decoration/admission-scope.ts";
import { decorationKey } from "../../src/decoration/decoration-kind.ts";
import type { Pod as EnginePod } from "../../src/api/pod.ts";
import { decoratePod, liveRevision, type DecorationRevision } from "../../src/decoration/decorate.ts";
import type { TemplateOf } from "../../src/decoration/running-revisions.ts";
import { DECORATION_LABEL_PREFIX, REVISIONS_ANNOTATION } from "../../src/decoration/recording.ts";
import { INSTANCE_ID_LABEL } from "../../src/decoration/rollout.ts";
import type { Namespace, Pod } from "../../src/kube/objects.ts";

const fixtureText = readFileSync(new URL("./fixtures/pod.json", import.meta.url), "utf8");
const fixture = JSON.parse(fixtureText) as Pod;

export const POPULATION_NAMESPACE = fixture.metadata?.namespace ?? "bench";
export const WORKLOADS = 50;
export const DECORATIONS = 100;
const TIERS = 8;

export type WorkloadKind = "CollaSet" | "Deployment" | "bare";

export function workloadKind(workload: number): WorkloadKind {
  const decile = workload % 10;
  return decile < 4 ? "CollaSet" : decile < 9 ? "Deployment" : "bare";
}

function hex(seed: string, length: number): string {
  return createHash("sha256").update(seed).digest("hex").slice(0, length);
}

function uid(seed: string): string {
  const h = hex(seed, 32);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-8${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/** Kubernetes' name-suffix alphabet (no vowels, no confusable digits). */
function suffix(seed: string, length = 5): string {
  const alphabet = "bcdfghjklmnpqrstvwxz2456789";
  return [...createHash("sha256").update(seed).digest()].slice(0, length).map((byte) => alphabet[byte % alphabet.length]).join("");
}

const workloadName = (workload: number, workloads: number) => `app-${String(workload).padStart(String(workloads - 1).length, "0")}`;

function decoration(index: number, selector: PodDecoration["spec"]["selector"], version: string): PodDecoration {
  const name = `pd-${String(index).padStart(4, "0")}`;
  return defaultPodDecoration({
    apiVersion: "apps.kusionstack.io/v1alpha1",
    kind: "PodDecoration",
    metadata: {
      name,
      namespace: POPULATION_NAMESPACE,
      uid: uid(name),
      generation: 2,
      creationTimestamp: new Date(Date.UTC(2026, 0, 1, 0, index)).toISOString().replace(".000Z", "Z"),
      finalizers: ["poddecoration.kusionstack.io/protection"],
    },
    spec: {
      selector,
      template: { metadata: [{ patchPolicy: "Overwrite", annotations: { [`example.com/${name}`]: version } }] },
    },
  });
}

function decorations(version: string, count: number, workloads: number): PodDecoration[] {
  const perWorkload = Math.min(workloads, Math.floor(((count - 10) * 5) / 9));
  return Array.from({ length: count }, (_, index) => {
    if (index < 2) return decoration(index, { matchExpressions: [{ key: "app", operator: "Exists" }] }, version);
    if (index < 10) return decoration(index, { matchExpressions: [{ key: "tier", operator: "In", values: [`tier-${index - 2}`] }] }, version);
    if (index < 10 + perWorkload) return decoration(index, { matchLabels: { app: workloadName(index - 10, workloads) } }, version);
    return decoration(index, { matchLabels: { app: workloadName((index - 10 - perWorkload) % workloads, workloads), track: "canary" } }, version);
  });
}

/** The namespace label the fleet's ClusterPodDecoration selects its namespaces by. */
export const FLEET_LABEL = { platform: "mesh" } as const;

function clusterDecoration(version: string): ClusterPodDecoration {
  const name = "fleet-mesh";
  return defaultClusterPodDecoration({
    apiVersion: OWN_API_VERSION,
    kind: CLUSTER_POD_DECORATION_KIND,
    metadata: {
      name,
      uid: uid(`cluster-${name}`),
      generation: 2,
      creationTimestamp: "2025-12-01T00:00:00Z",
      finalizers: ["poddecoration.kusionstack.io/protection"],
    },
    spec: {
      namespaceSelector: { matchLabels: { ...FLEET_LABEL } },
      selector: { matchExpressions: [{ key: "app", operator: "Exists" }] },
      template: { metadata: [{ patchPolicy: "Overwrite", annotations: { [`example.com/${name}`]: version } }] },
    },
  });
}

export interface PodPopulation {
  size: number;
  /** Defaulted, with finalizer, uid and generation, as the decoration cache holds them. */
  decorations: PodDecoration[];
  /** The fleet's ClusterPodDecoration (none without `fleet`), as its cache holds it. */
  clusterDecorations: ClusterPodDecoration[];
  /** The same one spec change ago (the revision pods still on the previous one record). */
  previousClusterDecorations: ClusterPodDecoration[];
  /** The namespaces the pods are in, as the namespace informer holds them (name and labels). */
  namespaces: Namespace[];
  /** Decoration key (a PodDecoration's name, `ClusterPodDecoration/<name>`) → its updated revision (the one its current spec is stored as). */
  updatedRevisions: Map<string, string>;
  /** A stored revision's template, as the controller reads it from the ControllerRevision cache. */
  template: TemplateOf;
  /** Pod number index (0 ≤ index < size) as the API server would return it; a new object per call. */
  pod: (index: number) => Pod;
  /** The same as JSON text. */
  podText: (index: number) => string;
}

export interface PopulationShape {
  workloads?: number;
  decorations?: number;
  /** Spreads the workloads over this many namespaces with one ClusterPodDecoration over them all. */
  fleet?: { namespaces: number };
}

/** Placeholders of what is unique to a pod, in the rendered text a pod is stamped from. */
const UNIQUE = { name: "@@name@@", uid: "@@uid@@", resourceVersion: "@@rv@@", created: "@@created@@", node: "@@node@@", podIP: "@@podIP@@", hostIP: "@@hostIP@@", volume: "@@volume@@", ordinal: "@@ordinal@@" } as const;
const UNIQUE_PATTERN = /@@(name|uid|rv|created|node|podIP|hostIP|volume|ordinal|id\d+)@@/g;

export function podPopulation(size: number, shape: PopulationShape = {}): PodPopulation {
  const workloads = shape.workloads ?? WORKLOADS;
  const current = decorations("v2", shape.decorations ?? DECORATIONS, workloads);
  // The same decorations one spec change ago: what pods still on the previous revision record.
  const previous = new Map(decorations("v1", shape.decorations ?? DECORATIONS, workloads).map((pd) => [pd.metadata.name ?? "", liveRevision(pd)]));
  const updated = new Map<PodDecoration, DecorationRevision>(current.map((pd) => [pd, liveRevision(pd)]));
  const indexOf = new Map(current.map((pd, index) => [pd, index]));
  const namespaceCount = shape.fleet?.namespaces;
  const namespaceOf = (workload: number) => (namespaceCount === undefined ? POPULATION_NAMESPACE : namespaceName(workload % namespaceCount, namespaceCount));
  const clusterDecorations = namespaceCount === undefined ? [] : [clusterDecoration("v2")];
  const previousClusterDecorations = namespaceCount === undefined ? [] : [clusterDecoration("v1")];
  // Its revisions are its spec's, whatever namespace it is seen from.
  const clusterRevisions = clusterDecorations.map((cpd, index) => ({ cpd, updated: liveRevision(asSeenFrom(cpd, "")), previous: liveRevision(asSeenFrom(previousClusterDecorations[index]!, "")) }));
  const templates = new Map([...updated.values(), ...previous.values(), ...clusterRevisions.flatMap((revisions) => [revisions.updated, revisions.previous])].map((revision) => [revision.revisionName, revision.template]));
  const fixtureOwnerUid = fixture.metadata?.ownerReferences?.[0]?.uid ?? "";
  const fixtureVolume = fixture.spec?.volumes?.find((volume) => volume.projected !== undefined)?.name ?? "";
  const fixtureNode = fixture.spec?.nodeName ?? "";

  /** Pod `index` with placeholders where it is unique, as JSON text. */
  function rendered(index: number): string {
    const workload = index % workloads;
    const ordinal = Math.floor(index / workloads);
    const kind = workloadKind(workload);
    const app = workloadName(workload, workloads);
    const templateHash = suffix(`${app}-template`, 10);
    const name = UNIQUE.name;
    const ownerUid = uid(`${app}-owner`);
    let id = 0;
    const text = fixtureText
      .replaceAll(fixtureOwnerUid, ownerUid)
      .replaceAll(fixtureVolume, UNIQUE.volume)
      .replaceAll(fixtureNode, UNIQUE.node)
      .replaceAll(fixture.status?.podIP ?? "", UNIQUE.podIP)
      .replaceAll(fixture.status?.hostIP ?? "", UNIQUE.hostIP)
      .replace(/(containerd:\/\/|sha256:)[0-9a-f]{64}/g, (_match, prefix: string) => `${prefix}@@id${id++}@@`);
    const base = JSON.parse(text) as Pod;
    const metadata = { ...base.metadata!, namespace: namespaceOf(workload) };
    const labels: Record<string, string> = {};
    for (const [key, value] of Object.entries(metadata.labels ?? {})) if (!key.startsWith(DECORATION_LABEL_PREFIX) && key !== "pod-template-hash") labels[key] = value;
    labels.app = app;
    labels.tier = `tier-${workload % TIERS}`;
    if (kind === "Deployment") labels["pod-template-hash"] = templateHash;
    if (kind === "CollaSet") labels[INSTANCE_ID_LABEL] = UNIQUE.ordinal;
    const annotations = { ...metadata.annotations };
    delete annotations[REVISIONS_ANNOTATION];
    const owner = kind === "Deployment"
      ? [{ apiVersion: "apps/v1", kind: "ReplicaSet", name: `${app}-${templateHash}`, uid: ownerUid, controller: true, blockOwnerDeletion: true }]
      : kind === "CollaSet"
        ? [{ apiVersion: "apps.kusionstack.io/v1alpha1", kind: "CollaSet", name: app, uid: ownerUid, controller: true, blockOwnerDeletion: true }]
        : undefined;
    const managedFields = kind === "bare" ? withoutOwnerFields(metadata.managedFields ?? []) : metadata.managedFields;
    const { ownerReferences: _owners, ...rest } = metadata;
    let result: Pod = {
      ...base,
      metadata: {
        ...rest,
        name,
        generateName: kind === "Deployment" ? `${app}-${templateHash}-` : kind === "CollaSet" ? `${app}-` : undefined,
        uid: UNIQUE.uid,
        resourceVersion: UNIQUE.resourceVersion,
        creationTimestamp: UNIQUE.created,
        labels,
        annotations,
        ...(owner === undefined ? {} : { ownerReferences: owner }),
        managedFields,
      },
      status: podStatus(base.status ?? {}, kind, ordinal, index),
    };
    if (result.metadata?.generateName === undefined) delete result.metadata?.generateName;

    if (index % 100 !== 99) {
      const namespace = namespaceOf(workload);
      const views = new Map(clusterRevisions.map((revisions, position) => [asSeenFrom(revisions.cpd, namespace), { ...revisions, position: current.length + position }]));
      const revisionFor = (pd: PodDecoration) => {
        const cluster = views.get(pd);
        if (cluster !== undefined) return (index * 7 + cluster.position) % 10 === 0 ? cluster.previous : cluster.updated;
        return (index * 7 + (indexOf.get(pd) ?? 0)) % 10 === 0 ? previous.get(pd.metadata.name ?? "") : updated.get(pd);
      };
      result = decoratePod(result as EnginePod, [...current, ...views.keys()], revisionFor).pod as Pod;
    }
    return JSON.stringify(result);
  }

  // Pods that differ only in what is unique to each render the same text: render it once.
  const texts = new Map<string, string>();
  function podText(index: number): string {
    const workload = index % workloads;
    const ordinal = Math.floor(index / workloads);
    const kind = workloadKind(workload);
    const variant = `${workload}/${index % 10}/${index % 100 === 99}/${index % 20 === 19}/${kind === "bare" && ordinal % 10 === 0}`;
    let text = texts.get(variant);
    if (text === undefined) texts.set(variant, (text = rendered(index)));
    const app = workloadName(workload, workloads);
    const values: Record<string, string> = {
      name: kind === "Deployment" ? `${app}-${suffix(`${app}-template`, 10)}-${suffix(`pod-${index}`)}` : kind === "CollaSet" ? `${app}-${suffix(`pod-${index}`)}` : `${app}-job-${ordinal}`,
      uid: uid(`pod-${index}`),
      rv: String(100_000 + index),
      created: new Date(Date.UTC(2026, 2, 1) + index * 7_000).toISOString().replace(".000Z", "Z"),
      node: `worker-${String(index % 97).padStart(2, "0")}`,
      podIP: `10.${244 + Math.floor(index / 62_500)}.${Math.floor(index / 250) % 250}.${index % 250}`,
      hostIP: `10.20.${Math.floor((index % 97) / 50)}.${index % 97}`,
      volume: `kube-api-access-${suffix(`volume-${index}`)}`,
      ordinal: String(ordinal),
    };
    const ids = hex(`ids-${index}`, 64);
    return text.replace(UNIQUE_PATTERN, (_match, key: string) => values[key] ?? `${ids.slice(0, 62)}${key.slice(2).padStart(2, "0")}`);
  }

  const pod = (index: number) => JSON.parse(podText(index)) as Pod;

  return {
    size,
    decorations: current,
    clusterDecorations,
    previousClusterDecorations,
    namespaces: namespaceCount === undefined ? [namespaceObject(POPULATION_NAMESPACE, false)] : Array.from({ length: namespaceCount }, (_, index) => namespaceObject(namespaceName(index, namespaceCount), true)),
    updatedRevisions: new Map([
      ...[...updated].map(([pd, revision]) => [decorationKey(pd), revision.revisionName] as const),
      ...clusterRevisions.map(({ cpd, updated: revision }) => [decorationKey(cpd), revision.revisionName] as const),
    ]),
    template: (_name, revision) => templates.get(revision),
    pod,
    podText,
  };
}

const namespaceName = (index: number, count: number) => `team-${String(index).padStart(String(count - 1).length, "0")}`;

function namespaceObject(name: string, inFleet: boolean): Namespace {
  return { apiVersion: "v1", kind: "Namespace", metadata: { name, resourceVersion: "1", labels: { [NAMESPACE_NAME_LABEL]: name, ...(inFleet ? FLEET_LABEL : {}) } } };
}

function podStatus(status: NonNullable<Pod["status"]>, kind: WorkloadKind, ordinal: number, index: number): Pod["status"] {
  if (kind === "bare" && ordinal % 10 === 0) return { ...status, phase: "Succeeded" };
  if (index % 20 !== 19) return status;
  const notReady = (condition: { type: string; status: string }) =>
    condition.type === "Ready" || condition.type === "ContainersReady" ? { ...condition, status: "False", reason: "ContainersNotReady" } : condition;
  return { ...status, conditions: status.conditions?.map(notReady) };
}

/** A bare pod's managedFields own no ownerReferences. */
function withoutOwnerFields(managedFields: NonNullable<NonNullable<Pod["metadata"]>["managedFields"]>) {
  return managedFields.map((entry) => {
    const fields = entry.fieldsV1 as { "f:metadata"?: Record<string, unknown> } | undefined;
    if (fields?.["f:metadata"]?.["f:ownerReferences"] === undefined) return entry;
    const { "f:ownerReferences": _owners, ...metadata } = fields["f:metadata"];
    return { ...entry, fieldsV1: { ...fields, "f:metadata": metadata } };
  });
}
