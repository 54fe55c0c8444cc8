// coordination.k8s.io/v1 access: the Lease that leader election holds.
import { CoordinationV1Api, type KubeConfig, type V1Lease } from "@kubernetes/client-node";
import type { Lease } from "./objects.ts";
import { resourceClient, type ResourceClient } from "./resource-client.ts";
import { resources } from "./resources.ts";
import { apiClient } from "./api-client.ts";

export interface CoordinationClient {
  leases: ResourceClient<Lease>;
}

export function coordinationClient(config: KubeConfig): CoordinationClient {
  const api = apiClient(config, CoordinationV1Api);
  return {
    leases: resourceClient<Lease>(resources.leases, {
      get: (namespace, name) => api.readNamespacedLease({ namespace, name }),
      list: (namespace, options) => (namespace === undefined ? api.listLeaseForAllNamespaces(options) : api.listNamespacedLease({ namespace, ...options })),
      // MicroTime fields stay strings: the generated serializer passes them through unchanged.
      create: (namespace, body, fieldManager) => api.createNamespacedLease({ namespace, body: body as V1Lease, fieldManager }),
      replace: (namespace, name, body, fieldManager) => api.replaceNamespacedLease({ namespace, name, body: body as V1Lease, fieldManager }),
      patch: (args, options) => api.patchNamespacedLease(args, options),
      delete: (namespace, name, body) => api.deleteNamespacedLease({ namespace, name, body }),
    }),
  };
}
