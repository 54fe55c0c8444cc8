// Whether a pod serves as it should, for every controller that updates pods: ready, not
// terminating, not in a PodOpsLifecycle operation, and running the images its spec names (an
// in-place update is in progress until the kubelet says so). Updates count what is not
// available against maxUnavailable.
import { sameImage } from "../api/image-reference.ts";
import { isPodReady } from "../decoration/rollout.ts";
import type { Pod } from "../kube/objects.ts";
import { missingExpectedFinalizers, outOfService } from "./lifecycle/pod-ops-lifecycle.ts";
import { RESTARTED_CONTAINERS_ANNOTATION } from "./pod-update.ts";

export function isTerminating(pod: Pod): boolean {
  return pod.metadata?.deletionTimestamp != null;
}

/**
 * Ready, not terminating, not out of service for a PodOpsLifecycle operation (one still waiting
 * for its PodTransitionRules' pre-check serves, as in kuperator), every container reported runs
 * the image its spec names, and every finalizer its available-conditions annotation expects is on
 * it (traffic has it in rotation): what kuperator calls service-available.
 */
export function isAvailable(pod: Pod): boolean {
  return !isTerminating(pod) && isPodReady(pod) && !outOfService(pod) && runsSpecImages(pod) && missingExpectedFinalizers(pod).length === 0;
}

/**
 * False while an in-place image change has not reached the node: a container or native sidecar
 * whose image an in-place update changed (RESTARTED_CONTAINERS_ANNOTATION) and that still runs
 * as the container that ran before it. A runtime reports an image by one of its tags (the first
 * it knows, when one image has several), so a tag that differs from the spec's says nothing by
 * itself: judged by the name only where no in-place update is recorded for the container and the
 * names agree or the container was created with this spec.
 */
export function runsSpecImages(pod: Pod): boolean {
  const restarted = restartedContainers(pod);
  const runs = (containers: readonly { name: string; image?: string }[], statuses: readonly { name: string; image: string; containerID?: string }[] | undefined) => {
    const running = new Map((statuses ?? []).map((status) => [status.name, status]));
    return containers.every((container) => {
      const status = running.get(container.name);
      if (status === undefined) return true;
      const before = restarted.get(container.name);
      // Changed in place: done once the container has been replaced (a new ID), whatever tag it reports.
      if (before !== undefined) return sameImage(status.image, container.image ?? "") || (status.containerID !== undefined && status.containerID !== "" && status.containerID !== before);
      // Never changed in place: it runs what the spec named when it was created.
      return true;
    });
  };
  const nativeSidecars = (pod.spec?.initContainers ?? []).filter((container) => container.restartPolicy === "Always");
  return runs(pod.spec?.containers ?? [], pod.status?.containerStatuses) && runs(nativeSidecars, pod.status?.initContainerStatuses);
}

/** The containers an in-place update restarts, by name, with the ID of the container before; empty when none is recorded or the record is unreadable. */
function restartedContainers(pod: Pod): Map<string, string> {
  const text = pod.metadata?.annotations?.[RESTARTED_CONTAINERS_ANNOTATION];
  if (text === undefined) return new Map();
  try {
    const parsed: unknown = JSON.parse(text);
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) return new Map();
    return new Map(Object.entries(parsed).filter((entry): entry is [string, string] => typeof entry[1] === "string"));
  } catch {
    return new Map();
  }
}
