// PodDecorations and ClusterPodDecorations in one engine (DESIGN §12): a pod's decorations are
// its namespace's PodDecorations and the cluster ones that select its namespace, told apart by
// kind. Everywhere a decoration is one of a pod's (records, targets, reports), it is known by its
// key: a PodDecoration's name, or `ClusterPodDecoration/<name>` — Kubernetes names hold no `/`,
// so a ClusterPodDecoration `mesh` and a PodDecoration `mesh` are two decorations, never one.
import { CLUSTER_POD_DECORATION_KIND, POD_DECORATION_KIND } from "../api/group.ts";

const CLUSTER_KEY_PREFIX = `${CLUSTER_POD_DECORATION_KIND}/`;

export function isClusterDecoration(decoration: { kind?: string | undefined }): boolean {
  return decoration.kind === CLUSTER_POD_DECORATION_KIND;
}

/** The decoration's key among a pod's decorations. */
export function decorationKey(decoration: { kind?: string | undefined; metadata: { name?: string | undefined } }): string {
  const name = decoration.metadata.name ?? "";
  return isClusterDecoration(decoration) ? `${CLUSTER_KEY_PREFIX}${name}` : name;
}

export function clusterKey(name: string): string {
  return `${CLUSTER_KEY_PREFIX}${name}`;
}

export function isClusterKey(key: string): boolean {
  return key.startsWith(CLUSTER_KEY_PREFIX);
}

/** The decoration's own name. */
export function nameOfKey(key: string): string {
  return isClusterKey(key) ? key.slice(CLUSTER_KEY_PREFIX.length) : key;
}

export function kindOfKey(key: string): string {
  return isClusterKey(key) ? CLUSTER_POD_DECORATION_KIND : POD_DECORATION_KIND;
}

/** `PodDecoration ns/name` or `ClusterPodDecoration name`, for messages. */
export function describeKey(key: string, namespace: string | undefined): string {
  return isClusterKey(key) ? `${CLUSTER_POD_DECORATION_KIND} ${nameOfKey(key)}` : `${POD_DECORATION_KIND} ${namespace ?? ""}/${key}`;
}

/** `PodDecoration/name` or `ClusterPodDecoration/name`: how warnings and `explain` name it. */
export function kindSlashName(key: string): string {
  return isClusterKey(key) ? key : `${POD_DECORATION_KIND}/${key}`;
}
