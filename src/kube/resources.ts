// The resource types the controllers list and watch, described once so that paths,
// list items' kind/apiVersion and informer names all come from the same place.
import { CLUSTER_POD_DECORATION_KIND, COLLASET_KIND, GROUP, OPERATIONJOB_KIND, OWN_GROUP, POD_DECORATION_KIND, PODTRANSITIONRULE_KIND, RESOURCE_CONTEXT_KIND, VERSION } from "../api/group.ts";

export interface ResourceType {
  /** "" for the core group. */
  group: string;
  version: string;
  /** Lower-case plural, as in the URL. */
  plural: string;
  kind: string;
  namespaced: boolean;
}


export const resources = {
  pods: { group: "", version: "v1", plural: "pods", kind: "Pod", namespaced: true },
  events: { group: "", version: "v1", plural: "events", kind: "Event", namespaced: true },
  namespaces: { group: "", version: "v1", plural: "namespaces", kind: "Namespace", namespaced: false },
  configMaps: { group: "", version: "v1", plural: "configmaps", kind: "ConfigMap", namespaced: true },
  secrets: { group: "", version: "v1", plural: "secrets", kind: "Secret", namespaced: true },
  persistentVolumeClaims: { group: "", version: "v1", plural: "persistentvolumeclaims", kind: "PersistentVolumeClaim", namespaced: true },
  controllerRevisions: { group: "apps", version: "v1", plural: "controllerrevisions", kind: "ControllerRevision", namespaced: true },
  leases: { group: "coordination.k8s.io", version: "v1", plural: "leases", kind: "Lease", namespaced: true },
  podDecorations: { group: GROUP, version: VERSION, plural: "poddecorations", kind: POD_DECORATION_KIND, namespaced: true },
  collaSets: { group: GROUP, version: VERSION, plural: "collasets", kind: COLLASET_KIND, namespaced: true },
  resourceContexts: { group: GROUP, version: VERSION, plural: "resourcecontexts", kind: RESOURCE_CONTEXT_KIND, namespaced: true },
  clusterPodDecorations: { group: OWN_GROUP, version: VERSION, plural: "clusterpoddecorations", kind: CLUSTER_POD_DECORATION_KIND, namespaced: false },
  podTransitionRules: { group: GROUP, version: VERSION, plural: "podtransitionrules", kind: PODTRANSITIONRULE_KIND, namespaced: true },
  operationJobs: { group: GROUP, version: VERSION, plural: "operationjobs", kind: OPERATIONJOB_KIND, namespaced: true },
} as const satisfies Record<string, ResourceType>;

export function apiVersionOf(resource: ResourceType): string {
  return resource.group === "" ? resource.version : `${resource.group}/${resource.version}`;
}

/** The collection URL path, across all namespaces when namespace is undefined. */
export function collectionPath(resource: ResourceType, namespace?: string): string {
  const base = resource.group === "" ? `/api/${resource.version}` : `/apis/${resource.group}/${resource.version}`;
  if (!resource.namespaced || namespace === undefined) return `${base}/${resource.plural}`;
  return `${base}/namespaces/${encodeURIComponent(namespace)}/${resource.plural}`;
}

/** A short stable name for logs and metrics, e.g. "pods" or "poddecorations.apps.kusionstack.io". */
export function resourceName(resource: ResourceType): string {
  return resource.group === "" ? resource.plural : `${resource.plural}.${resource.group}`;
}
