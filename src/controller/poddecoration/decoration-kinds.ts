// The two kinds the PodDecoration controller reconciles (DESIGN §12: cluster decorations reuse
// poddecoration/, not a copy of it): a PodDecoration decorates its own namespace; a
// ClusterPodDecoration every namespace it selects, its revisions in the release namespace. What
// differs between them is said once here; the reconcile is the same.
import type { FieldError } from "../../api/field-errors.ts";
import { asSeenFrom, validateClusterPodDecoration } from "../../api/cluster-poddecoration.ts";
import { API_VERSION, CLUSTER_POD_DECORATION_KIND, OWN_API_VERSION, POD_DECORATION_KIND } from "../../api/group.ts";
import { validatePodDecoration, type PodDecoration } from "../../api/poddecoration.ts";
import type { ResourceClient, StatusClient } from "../../kube/resource-client.ts";
import { CLUSTER_POD_DECORATION_NAME_LABEL, POD_DECORATION_NAME_LABEL } from "../../revision/controller-revision.ts";
import { CLUSTER_REVISION_PREFIX } from "../../revision/revision-data.ts";
import { splitKey, type KubeObject, type Pod } from "../../kube/objects.ts";
import type { Lister } from "../runtime/cache.ts";
import type { CachedClusterDecoration, ClusterDecorations } from "../cluster-decorations.ts";
import { podsRecording, podsRecordingCluster } from "./pod-indexes.ts";
import { recordingFacts, type StatusFacts } from "./status.ts";
import { clusterKey, decorationKey } from "../../decoration/decoration-kind.ts";

export type CachedDecoration = PodDecoration & KubeObject;

export type DecorationClient = Pick<ResourceClient<CachedDecoration>, "jsonPatch"> & Pick<StatusClient<CachedDecoration>, "jsonPatchStatus">;

export interface ReconciledKind {
  kind: string;
  apiVersion: string;
  /** The label naming the owner on its revisions. */
  ownerLabelKey: string;
  /** What its revisions' names start with before its name. */
  namePrefix: string;
  /** The object a queue key names. */
  get(key: string): CachedDecoration | undefined;
  client: DecorationClient;
  validate(value: unknown): FieldError[];
  /** Where its revisions live. */
  revisionNamespace(decoration: CachedDecoration): string;
  /** The decoration as seen in each namespace whose pods it decorates now. */
  views(decoration: CachedDecoration): PodDecoration[];
  /** Whether it is of several namespaces (status names namespaces then). */
  fleet: boolean;
  /** The pods that record it, wherever they are. */
  recording(pods: Lister<Pod>, decoration: CachedDecoration): Pod[];
  /** Their facts (status.ts), held while the pods are unchanged. */
  recordingFacts(pods: Lister<Pod>, decoration: CachedDecoration): readonly StatusFacts[];
  /** The decorations of a namespace as its pods get them (for its standing there). */
  namespaceDecorations(namespace: string): readonly PodDecoration[];
}

export function podDecorationKind(decorations: Lister<CachedDecoration>, client: DecorationClient, cluster?: ClusterDecorations): ReconciledKind {
  return {
    kind: POD_DECORATION_KIND,
    apiVersion: API_VERSION,
    ownerLabelKey: POD_DECORATION_NAME_LABEL,
    namePrefix: "",
    get: (key) => {
      const { namespace = "", name } = splitKey(key);
      return decorations.get(namespace, name);
    },
    client,
    validate: validatePodDecoration,
    revisionNamespace: (decoration) => decoration.metadata.namespace ?? "",
    views: (decoration) => [decoration],
    fleet: false,
    recording: (pods, decoration) => podsRecording(pods, decoration),
    recordingFacts: (pods, decoration) => recordingFacts(pods, decoration.metadata.namespace ?? "", decorationKey(decoration)),
    namespaceDecorations: (namespace) => [...decorations.list(namespace), ...(cluster?.forNamespace(namespace) ?? [])],
  };
}

export function clusterPodDecorationKind(cluster: ClusterDecorations, namespaceDecorations: (namespace: string) => readonly PodDecoration[], client: DecorationClient, releaseNamespace: string): ReconciledKind {
  return {
    kind: CLUSTER_POD_DECORATION_KIND,
    apiVersion: OWN_API_VERSION,
    ownerLabelKey: CLUSTER_POD_DECORATION_NAME_LABEL,
    namePrefix: CLUSTER_REVISION_PREFIX,
    get: (key) => cluster.named(key),
    client,
    validate: validateClusterPodDecoration,
    revisionNamespace: () => releaseNamespace,
    views: (decoration) => {
      const cpd = decoration as unknown as CachedClusterDecoration;
      return cluster.selectedNamespaces(cpd).map((namespace) => asSeenFrom(cpd, namespace));
    },
    fleet: true,
    recording: (pods, decoration) => podsRecordingCluster(pods, decoration.metadata.name ?? ""),
    recordingFacts: (pods, decoration) => recordingFacts(pods, undefined, clusterKey(decoration.metadata.name ?? "")),
    namespaceDecorations,
  };
}
