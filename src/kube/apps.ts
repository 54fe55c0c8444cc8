// apps/v1 access for the controllers: ControllerRevisions, the revision history of both kinds.
import { AppsV1Api, type KubeConfig, type V1ControllerRevision } from "@kubernetes/client-node";
import type { ControllerRevision } from "./objects.ts";
import { resourceClient, type ResourceClient } from "./resource-client.ts";
import { resources } from "./resources.ts";
import { apiClient } from "./api-client.ts";

export interface AppsClient {
  controllerRevisions: ResourceClient<ControllerRevision>;
}

export function appsClient(config: KubeConfig): AppsClient {
  const api = apiClient(config, AppsV1Api);
  return {
    controllerRevisions: resourceClient<ControllerRevision>(resources.controllerRevisions, {
      get: (namespace, name) => api.readNamespacedControllerRevision({ namespace, name }),
      list: (namespace, options) =>
        namespace === undefined ? api.listControllerRevisionForAllNamespaces(options) : api.listNamespacedControllerRevision({ namespace, ...options }),
      create: (namespace, body, fieldManager) => api.createNamespacedControllerRevision({ namespace, body: body as V1ControllerRevision, fieldManager }),
      replace: (namespace, name, body, fieldManager) =>
        api.replaceNamespacedControllerRevision({ namespace, name, body: body as V1ControllerRevision, fieldManager }),
      patch: (args, options) => api.patchNamespacedControllerRevision(args, options),
      delete: (namespace, name, body) => api.deleteNamespacedControllerRevision({ namespace, name, body }),
    }),
  };
}
