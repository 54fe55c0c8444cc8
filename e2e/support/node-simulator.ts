// A kubelet stand-in for e2e tests and the demo — it simulates a node, never the API server.
// Pods of the namespaces it serves are bound to a fake Node, reported Running and Ready, and
// an image changed in place is reported running after `restartDelayMs`, as a kubelet does once
// it has restarted the container (simulated-containers.ts keeps what runs). Pods being deleted are removed for good (the kubelet's final
// delete with grace period 0), which finalizers may still hold back.
import { CoreV1Api, type KubeConfig } from "@kubernetes/client-node";
import { pino } from "pino";
import { Controller } from "../../src/controller/runtime/controller.ts";
import { Informer } from "../../src/controller/runtime/informer.ts";
import { createKubeClient } from "../../src/kube/client.ts";
import { isNotFound } from "../../src/kube/errors.ts";
import { restListWatch } from "../../src/kube/list-watch.ts";
import { splitKey, type Pod } from "../../src/kube/objects.ts";
import { resources } from "../../src/kube/resources.ts";
import { newPodMemory, sameStatuses, stepContainers, type PodMemory } from "./simulated-containers.ts";
import { apiClient } from "../../src/kube/api-client.ts";

export interface NodeSimulatorOptions {
  config: KubeConfig;
  /** Only pods of this namespace (all namespaces when omitted). */
  namespace?: string;
  nodeName?: string;
  /** How long a container takes to come back after its image changed (default 100 ms). */
  restartDelayMs?: number;
}

export interface NodeSimulator {
  nodeName: string;
  stop(): Promise<void>;
}

export async function startNodeSimulator(options: NodeSimulatorOptions): Promise<NodeSimulator> {
  const nodeName = options.nodeName ?? "simulated-node";
  const restartDelayMs = options.restartDelayMs ?? 100;
  const client = createKubeClient(options.config);
  const core = apiClient(options.config, CoreV1Api);
  await core.createNode({ body: { metadata: { name: nodeName, labels: { "kubernetes.io/hostname": nodeName } } } }).catch((error: unknown) => {
    if ((error as { code?: number }).code !== 409) throw error;
  });

  const stop = new AbortController();
  const informer = new Informer<Pod>({
    name: "simulated-kubelet-pods",
    listWatch: restListWatch<Pod>(client.rest, resources.pods, options.namespace === undefined ? {} : { namespace: options.namespace }),
    logger: pino({ level: "silent" }),
  });
  /** What runs in each pod (by uid): the node's own knowledge, which a stale cache cannot roll back. */
  const nodeMemory = new Map<string, PodMemory>();
  const finalDeletes = new Set<string>();

  const reconcile = async (key: string) => {
    const { namespace = "", name } = splitKey(key);
    const pod = informer.cache.get(namespace, name);
    if (pod === undefined) return undefined;
    const spec = pod.spec;
    if (spec === undefined) return undefined;
    if (pod.metadata?.deletionTimestamp != null) {
      if (spec.nodeName !== undefined && !finalDeletes.has(pod.metadata.uid ?? "")) {
        finalDeletes.add(pod.metadata.uid ?? "");
        await core.deleteNamespacedPod({ namespace, name, gracePeriodSeconds: 0 }).catch((error: unknown) => {
          if (!isNotFound(error)) throw error;
        });
      }
      return undefined;
    }
    if (spec.nodeName === undefined) {
      await core.createNamespacedBinding({ namespace, body: { metadata: { name }, target: { apiVersion: "v1", kind: "Node", name: nodeName } } });
      return undefined;
    }
    if (spec.nodeName !== nodeName) return undefined;

    const uid = pod.metadata?.uid ?? "";
    let memory = nodeMemory.get(uid);
    if (memory === undefined) nodeMemory.set(uid, (memory = newPodMemory()));
    const now = Date.now();
    const { statuses: containerStatuses, wakeInMs } = stepContainers(memory, spec.containers, pod.status?.containerStatuses, now, restartDelayMs);
    // As the kubelet: Ready also waits for every readiness gate's condition to be True, and
    // conditions it does not own (the gates') are kept as they are.
    const existing = pod.status?.conditions ?? [];
    const gatesTrue = (spec.readinessGates ?? []).every((gate) => existing.some((condition) => condition.type === gate.conditionType && condition.status === "True"));
    const readyNow = gatesTrue ? "True" : "False";
    const readyBefore = existing.find((condition) => condition.type === "Ready");
    if (pod.status?.phase !== "Running" || !sameStatuses(pod.status.containerStatuses, containerStatuses) || readyBefore?.status !== readyNow) {
      const startedAt = new Date(now).toISOString().replace(/\.\d{3}Z$/, "Z");
      const transition = (type: string, status: string) => {
        const before = existing.find((condition) => condition.type === type);
        return before?.status === status && before.lastTransitionTime !== undefined ? before.lastTransitionTime : startedAt;
      };
      const kubeletTypes = ["PodScheduled", "Initialized", "ContainersReady", "Ready"];
      const conditions = [
        ...kubeletTypes.map((type) => {
          const status = type === "Ready" ? readyNow : "True";
          return { type, status, lastTransitionTime: transition(type, status) };
        }),
        ...existing.filter((condition) => !kubeletTypes.includes(condition.type)),
      ];
      await client.core.pods.mergePatchStatus(namespace, name, {
        status: { phase: "Running", hostIP: "10.0.0.1", podIP: "10.0.0.2", startTime: pod.status?.startTime ?? startedAt, conditions, containerStatuses },
      }).catch((error: unknown) => {
        if (!isNotFound(error)) throw error;
      });
    }
    return wakeInMs === undefined ? undefined : { requeueAfter: wakeInMs };
  };

  const controller = new Controller({ name: "simulated-kubelet", reconcile, workers: 4, waitForSync: [informer] });
  const enqueue = (pod: Pod) => controller.enqueue(`${pod.metadata?.namespace ?? ""}/${pod.metadata?.name ?? ""}`);
  informer.addEventHandler({ onAdd: enqueue, onUpdate: (_old, pod) => enqueue(pod), onDelete: (pod) => nodeMemory.delete(pod.metadata?.uid ?? "") });
  const informerDone = informer.run(stop.signal);
  const controllerDone = controller.start(stop.signal);
  return {
    nodeName,
    async stop() {
      stop.abort();
      await Promise.all([informerDone, controllerDone]);
    },
  };
}
