// Whether a pod serves as it should, for every controller that updates pods: ready, not
// terminating, not in a PodOpsLifecycle operation, and running the images its spec names (an
// in-place update is in progress until the kubelet says so). Updates count what is not
// available against maxUnavailable.
import { sameImage } from "../api/image-reference.ts";
import { isPodReady } from "../decoration/rollout.ts";
import type { Pod } from "../kube/objects.ts";
import { inLifecycle } from "./lifecycle/pod-ops-lifecycle.ts";

export function isTerminating(pod: Pod): boolean {
  return pod.metadata?.deletionTimestamp != null;
}

/**
 * Ready, not terminating, not in a PodOpsLifecycle operation (out of traffic, or about to be),
 * and every container reported runs the image its spec names.
 */
export function isAvailable(pod: Pod): boolean {
  return !isTerminating(pod) && isPodReady(pod) && !inLifecycle(pod) && runsSpecImages(pod);
}

/**
 * False while an image change has not reached the node (the in-place update is in progress):
 * a container or native sidecar whose status reports another image than its spec names.
 */
export function runsSpecImages(pod: Pod): boolean {
  const runs = (containers: readonly { name: string; image?: string }[], statuses: readonly { name: string; image: string }[] | undefined) => {
    const running = new Map((statuses ?? []).map((status) => [status.name, status.image]));
    return containers.every((container) => {
      const image = running.get(container.name);
      return image === undefined || sameImage(image, container.image ?? "");
    });
  };
  const nativeSidecars = (pod.spec?.initContainers ?? []).filter((container) => container.restartPolicy === "Always");
  return runs(pod.spec?.containers ?? [], pod.status?.containerStatuses) && runs(nativeSidecars, pod.status?.initContainerStatuses);
}
