// The CollaSet the real-node stories start from, built as an object (the yaml library writes the
// manifest) and changed by what each story needs; and local volumes for its claims: a storage
// class of the story's own with hostPath PersistentVolumes that kube-controller-manager's PV
// binder binds claims to.
import { join } from "node:path";
import { expect } from "vitest";
import { stringify } from "yaml";
import { testImage } from "../node/test-images.ts";
import { apply } from "./collaset-world.ts";
import { kubectl } from "./cluster.ts";

export interface NodeCollaSetOptions {
  replicas: number;
  /** The `app` container's image (default: the test image `app:1`). */
  image?: string;
  /** More fields of the `app` container (command, env, probes, mounts). */
  container?: Record<string, unknown>;
  /** More fields of the CollaSet's spec (updateStrategy, scaleStrategy, volumeClaimTemplates, …). */
  spec?: Record<string, unknown>;
}

/** CollaSet `web` selecting `app: web`: one container `app`, a second's grace period, no token. */
export function nodeCollaSet(namespace: string, options: NodeCollaSetOptions): Record<string, unknown> {
  return {
    apiVersion: "apps.kusionstack.io/v1alpha1",
    kind: "CollaSet",
    metadata: { name: "web", namespace },
    spec: {
      replicas: options.replicas,
      selector: { matchLabels: { app: "web" } },
      template: {
        metadata: { labels: { app: "web" } },
        spec: {
          terminationGracePeriodSeconds: 1,
          automountServiceAccountToken: false,
          containers: [{ name: "app", image: options.image ?? testImage("app"), ...options.container }],
        },
      },
      ...options.spec,
    },
  };
}

export function applyNodeCollaSet(namespace: string, options: NodeCollaSetOptions): Promise<void> {
  return apply(stringify(nodeCollaSet(namespace, options)));
}

/** A claim template `name` of the storage class, 100Mi, ReadWriteOnce. */
export function claimTemplate(name: string, storageClass: string): Record<string, unknown> {
  return { metadata: { name }, spec: { storageClassName: storageClass, accessModes: ["ReadWriteOnce"], resources: { requests: { storage: "100Mi" } } } };
}

/** A storage class of the story's own and `count` hostPath volumes in it under `hostRoot`; removed by the returned function. */
export async function localVolumes(hostRoot: string, storageClass: string, count: number): Promise<() => Promise<void>> {
  const volumes = Array.from({ length: count }, (_, index) => `${storageClass}-${index}`);
  await apply([
    { apiVersion: "storage.k8s.io/v1", kind: "StorageClass", metadata: { name: storageClass }, provisioner: "kubernetes.io/no-provisioner", volumeBindingMode: "Immediate" },
    ...volumes.map((name) => ({
      apiVersion: "v1",
      kind: "PersistentVolume",
      metadata: { name },
      spec: {
        storageClassName: storageClass,
        capacity: { storage: "100Mi" },
        accessModes: ["ReadWriteOnce"],
        persistentVolumeReclaimPolicy: "Retain",
        hostPath: { path: join(hostRoot, name), type: "DirectoryOrCreate" },
      },
    })),
  ].map((object) => stringify(object)).join("---\n"));
  return async () => {
    const result = await kubectl(["delete", "--wait=false", "--ignore-not-found", "persistentvolume", ...volumes]);
    expect(result.code).toBe(0);
    expect((await kubectl(["delete", "--ignore-not-found", "storageclass", storageClass])).code).toBe(0);
  };
}
