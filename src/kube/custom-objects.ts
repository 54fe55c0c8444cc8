// apps.kusionstack.io/v1alpha1 access: PodDecorations, CollaSets, PodTransitionRules and
// OperationJobs, with their status subresource, and ResourceContexts (no status). The shapes belong to src/api; here they are any
// object with metadata.
import { CustomObjectsApi, type KubeConfig } from "@kubernetes/client-node";
import type { KubeObject } from "./objects.ts";
import { resourceClient, statusClient, type ResourceClient, type StatusClient } from "./resource-client.ts";
import { resources, type ResourceType } from "./resources.ts";
import { apiClient } from "./api-client.ts";

export type CustomResourceClient<T extends KubeObject> = ResourceClient<T> & StatusClient<T>;

export interface KusionClient<PodDecoration extends KubeObject = KubeObject, CollaSet extends KubeObject = KubeObject> {
  podDecorations: CustomResourceClient<PodDecoration>;
  collaSets: CustomResourceClient<CollaSet>;
  resourceContexts: ResourceClient<KubeObject>;
  /** pod-decorator.io's ClusterPodDecorations (cluster-scoped: the namespace argument is ignored). */
  clusterPodDecorations: CustomResourceClient<KubeObject>;
  podTransitionRules: CustomResourceClient<KubeObject>;
  operationJobs: CustomResourceClient<KubeObject>;
}

/** A typed client for any namespaced custom resource. */
export function customResourceClient<T extends KubeObject>(api: CustomObjectsApi, resource: ResourceType): CustomResourceClient<T> {
  const target = { group: resource.group, version: resource.version, plural: resource.plural };
  const objects = resourceClient<T>(resource, {
    get: (namespace, name) => api.getNamespacedCustomObject({ ...target, namespace, name }),
    list: async (namespace, options) =>
      (namespace === undefined
        ? await api.listClusterCustomObject({ ...target, ...options })
        : await api.listNamespacedCustomObject({ ...target, namespace, ...options })) as { items: unknown[] },
    create: (namespace, body, fieldManager) => api.createNamespacedCustomObject({ ...target, namespace, body: body as object, fieldManager }),
    replace: (namespace, name, body, fieldManager) => api.replaceNamespacedCustomObject({ ...target, namespace, name, body: body as object, fieldManager }),
    patch: (args, options) => api.patchNamespacedCustomObject({ ...target, ...args }, options),
    delete: (namespace, name, body) => api.deleteNamespacedCustomObject({ ...target, namespace, name, body }),
  });
  const status = statusClient<T>(resource, {
    patchStatus: (args, options) => api.patchNamespacedCustomObjectStatus({ ...target, ...args }, options),
    replaceStatus: (namespace, name, body, fieldManager) =>
      api.replaceNamespacedCustomObjectStatus({ ...target, namespace, name, body: body as object, fieldManager }),
  });
  return { ...objects, ...status };
}

/** A typed client for a cluster-scoped custom resource; the namespace arguments are ignored. */
export function clusterCustomResourceClient<T extends KubeObject>(api: CustomObjectsApi, resource: ResourceType): CustomResourceClient<T> {
  const target = { group: resource.group, version: resource.version, plural: resource.plural };
  const objects = resourceClient<T>(resource, {
    get: (_namespace, name) => api.getClusterCustomObject({ ...target, name }),
    list: async (_namespace, options) => (await api.listClusterCustomObject({ ...target, ...options })) as { items: unknown[] },
    create: (_namespace, body, fieldManager) => api.createClusterCustomObject({ ...target, body: body as object, fieldManager }),
    replace: (_namespace, name, body, fieldManager) => api.replaceClusterCustomObject({ ...target, name, body: body as object, fieldManager }),
    patch: ({ namespace: _namespace, ...args }, options) => api.patchClusterCustomObject({ ...target, ...args }, options),
    delete: (_namespace, name, body) => api.deleteClusterCustomObject({ ...target, name, body }),
  });
  const status = statusClient<T>(resource, {
    patchStatus: ({ namespace: _namespace, ...args }, options) => api.patchClusterCustomObjectStatus({ ...target, ...args }, options),
    replaceStatus: (_namespace, name, body, fieldManager) => api.replaceClusterCustomObjectStatus({ ...target, name, body: body as object, fieldManager }),
  });
  return { ...objects, ...status };
}

export function kusionClient<PodDecoration extends KubeObject = KubeObject, CollaSet extends KubeObject = KubeObject>(
  config: KubeConfig,
): KusionClient<PodDecoration, CollaSet> {
  const api = apiClient(config, CustomObjectsApi);
  return {
    podDecorations: customResourceClient<PodDecoration>(api, resources.podDecorations),
    collaSets: customResourceClient<CollaSet>(api, resources.collaSets),
    resourceContexts: customResourceClient<KubeObject>(api, resources.resourceContexts),
    clusterPodDecorations: clusterCustomResourceClient<KubeObject>(api, resources.clusterPodDecorations),
    podTransitionRules: customResourceClient<KubeObject>(api, resources.podTransitionRules),
    operationJobs: customResourceClient<KubeObject>(api, resources.operationJobs),
  };
}
