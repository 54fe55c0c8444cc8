// core/v1 access for the controllers: pods (with status), events, configmaps, the webhook's
// CA secret, a CollaSet's PersistentVolumeClaims, and namespaces (read only).
import { CoreV1Api, type CoreV1Event, type KubeConfig, type V1ConfigMap, type V1Eviction, type V1PersistentVolumeClaim, type V1Pod, type V1Secret } from "@kubernetes/client-node";
import type { ConfigMap, Event, Namespace, PersistentVolumeClaim, Pod, Secret } from "./objects.ts";
import { listItems, toPlain } from "./plain.ts";
import { resourceClient, statusClient, type ListOptions, type ResourceClient, type StatusClient } from "./resource-client.ts";
import { resources } from "./resources.ts";
import { apiClient } from "./api-client.ts";

export interface NamespaceClient {
  get(name: string): Promise<Namespace>;
  list(options?: ListOptions): Promise<Namespace[]>;
}

/** pods/eviction (policy/v1): a deletion that PodDisruptionBudgets may refuse (429). */
export interface EvictionClient {
  evict(namespace: string, name: string, uid?: string): Promise<void>;
}

export interface CoreClient {
  pods: ResourceClient<Pod> & StatusClient<Pod>;
  evictions: EvictionClient;
  events: ResourceClient<Event>;
  configMaps: ResourceClient<ConfigMap>;
  secrets: Pick<ResourceClient<Secret>, "get" | "create" | "replace">;
  persistentVolumeClaims: ResourceClient<PersistentVolumeClaim>;
  namespaces: NamespaceClient;
}

export function coreClient(config: KubeConfig): CoreClient {
  const api = apiClient(config, CoreV1Api);
  const pods = resourceClient<Pod>(resources.pods, {
    get: (namespace, name) => api.readNamespacedPod({ namespace, name }),
    list: (namespace, options) => (namespace === undefined ? api.listPodForAllNamespaces(options) : api.listNamespacedPod({ namespace, ...options })),
    create: (namespace, body, fieldManager) => api.createNamespacedPod({ namespace, body: body as V1Pod, fieldManager }),
    replace: (namespace, name, body, fieldManager) => api.replaceNamespacedPod({ namespace, name, body: body as V1Pod, fieldManager }),
    patch: (args, options) => api.patchNamespacedPod(args, options),
    delete: (namespace, name, body) => api.deleteNamespacedPod({ namespace, name, body }),
  });
  const podStatus = statusClient<Pod>(resources.pods, {
    patchStatus: (args, options) => api.patchNamespacedPodStatus(args, options),
    replaceStatus: (namespace, name, body, fieldManager) => api.replaceNamespacedPodStatus({ namespace, name, body: body as V1Pod, fieldManager }),
  });
  const events = resourceClient<Event>(resources.events, {
    get: (namespace, name) => api.readNamespacedEvent({ namespace, name }),
    list: (namespace, options) => (namespace === undefined ? api.listEventForAllNamespaces(options) : api.listNamespacedEvent({ namespace, ...options })),
    create: (namespace, body, fieldManager) => api.createNamespacedEvent({ namespace, body: body as CoreV1Event, fieldManager }),
    replace: (namespace, name, body, fieldManager) => api.replaceNamespacedEvent({ namespace, name, body: body as CoreV1Event, fieldManager }),
    patch: (args, options) => api.patchNamespacedEvent(args, options),
    delete: (namespace, name, body) => api.deleteNamespacedEvent({ namespace, name, body }),
  });
  const configMaps = resourceClient<ConfigMap>(resources.configMaps, {
    get: (namespace, name) => api.readNamespacedConfigMap({ namespace, name }),
    list: (namespace, options) => (namespace === undefined ? api.listConfigMapForAllNamespaces(options) : api.listNamespacedConfigMap({ namespace, ...options })),
    create: (namespace, body, fieldManager) => api.createNamespacedConfigMap({ namespace, body: body as V1ConfigMap, fieldManager }),
    replace: (namespace, name, body, fieldManager) => api.replaceNamespacedConfigMap({ namespace, name, body: body as V1ConfigMap, fieldManager }),
    patch: (args, options) => api.patchNamespacedConfigMap(args, options),
    delete: (namespace, name, body) => api.deleteNamespacedConfigMap({ namespace, name, body }),
  });
  const secrets = resourceClient<Secret>(resources.secrets, {
    get: (namespace, name) => api.readNamespacedSecret({ namespace, name }),
    list: (namespace, options) => (namespace === undefined ? api.listSecretForAllNamespaces(options) : api.listNamespacedSecret({ namespace, ...options })),
    create: (namespace, body, fieldManager) => api.createNamespacedSecret({ namespace, body: body as V1Secret, fieldManager }),
    replace: (namespace, name, body, fieldManager) => api.replaceNamespacedSecret({ namespace, name, body: body as V1Secret, fieldManager }),
    patch: (args, options) => api.patchNamespacedSecret(args, options),
    delete: (namespace, name, body) => api.deleteNamespacedSecret({ namespace, name, body }),
  });
  const persistentVolumeClaims = resourceClient<PersistentVolumeClaim>(resources.persistentVolumeClaims, {
    get: (namespace, name) => api.readNamespacedPersistentVolumeClaim({ namespace, name }),
    list: (namespace, options) => (namespace === undefined ? api.listPersistentVolumeClaimForAllNamespaces(options) : api.listNamespacedPersistentVolumeClaim({ namespace, ...options })),
    create: (namespace, body, fieldManager) => api.createNamespacedPersistentVolumeClaim({ namespace, body: body as V1PersistentVolumeClaim, fieldManager }),
    replace: (namespace, name, body, fieldManager) => api.replaceNamespacedPersistentVolumeClaim({ namespace, name, body: body as V1PersistentVolumeClaim, fieldManager }),
    patch: (args, options) => api.patchNamespacedPersistentVolumeClaim(args, options),
    delete: (namespace, name, body) => api.deleteNamespacedPersistentVolumeClaim({ namespace, name, body }),
  });
  return {
    pods: { ...pods, ...podStatus },
    persistentVolumeClaims,
    evictions: {
      async evict(namespace, name, uid) {
        const body: V1Eviction = {
          apiVersion: "policy/v1",
          kind: "Eviction",
          metadata: { name, namespace },
          ...(uid === undefined ? {} : { deleteOptions: { preconditions: { uid } } }),
        };
        await api.createNamespacedPodEviction({ namespace, name, body });
      },
    },
    events,
    configMaps,
    secrets,
    namespaces: {
      async get(name) {
        return { ...toPlain(await api.readNamespace({ name })), apiVersion: "v1", kind: "Namespace" };
      },
      async list(options = {}) {
        return listItems(await api.listNamespace(options), "v1", "Namespace");
      },
    },
  };
}
