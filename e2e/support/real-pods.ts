// Reading pods as a real kubelet reports them: the status of each container (regular or init),
// and waiting until a pod's containers reach a state.
import type { V1Pod } from "@kubernetes/client-node";
import type { Pod } from "../../src/kube/objects.ts";
import { clients, eventually } from "./cluster.ts";

export interface ContainerView {
  image: string;
  imageID: string;
  restartCount: number;
  running: boolean;
  ready: boolean;
  containerID: string;
}

/** The kubelet's report of container `name` (regular or init), or undefined before it has one. */
export function containerView(pod: V1Pod | Pod, name: string): ContainerView | undefined {
  const status = [...(pod.status?.containerStatuses ?? []), ...(pod.status?.initContainerStatuses ?? [])].find((entry) => entry.name === name);
  if (status === undefined) return undefined;
  return {
    image: status.image,
    imageID: status.imageID,
    restartCount: status.restartCount,
    running: status.state?.running !== undefined,
    ready: status.ready,
    containerID: status.containerID ?? "",
  };
}

export function isPodReady(pod: V1Pod): boolean {
  return pod.status?.conditions?.some((condition) => condition.type === "Ready" && condition.status === "True") === true;
}

/** Polls the pod until `check` returns a value (the pod as the kubelet last reported it). */
export function podReaches<T>(namespace: string, name: string, check: (pod: V1Pod) => T | undefined, what: string, timeoutMs = 90_000): Promise<T> {
  return eventually(async () => check(await clients().core.readNamespacedPod({ namespace, name })), timeoutMs, `pod ${namespace}/${name}: ${what}`);
}

/** Creates the pod and waits until it is Ready with every container running. */
export async function createRunningPod(namespace: string, pod: V1Pod): Promise<V1Pod> {
  await clients().core.createNamespacedPod({ namespace, body: pod });
  return podReaches(namespace, pod.metadata!.name!, (current) => (isPodReady(current) ? current : undefined), "Ready");
}
