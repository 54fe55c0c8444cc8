// How a live pod moves from what it is made of to what it should be (DESIGN §6): in place when
// the two renders differ only in metadata and in images the kubelet really restarts a container
// for — those of regular containers and of native sidecars (init containers with
// `restartPolicy: Always`); else by recreation. The API server also accepts a new image for a
// regular init container, but the kubelet never runs it on a live pod (it keeps reporting the
// old image: e2e/on-node/in-place-facts.test.ts), so that change recreates. The renders come
// from stored revisions on both sides, so defaults the API server filled in on the live pod
// never look like a difference.
import { canonicalJson } from "../revision/canonical-json.ts";
import type { Pod } from "../api/pod.ts";
import type { Pod as LivePod } from "../kube/objects.ts";
import { pointerSegment, type JsonPatchOperation } from "../kube/patch.ts";

/**
 * The containers an in-place update changed the image of, each with the ID of the container that
 * ran before (JSON: name → containerID). A runtime may report a container's image under another
 * tag of the same image (the first one it knows), so "runs the new image" is told by the
 * container having been restarted since, not by the tag it reports (pod-availability.ts).
 */
export const RESTARTED_CONTAINERS_ANNOTATION = "poddecoration.kusionstack.io/in-place-restarts";

export type PodUpdate =
  | { kind: "in-place"; operations: JsonPatchOperation[] }
  | { kind: "recreate"; reason: string };

/**
 * `from` is the render of what the live pod records (undefined when a revision it records is
 * no longer stored), `to` the render of its target.
 */
export function podUpdate(live: LivePod, from: Pod | undefined, to: Pod): PodUpdate {
  if (from === undefined) return { kind: "recreate", reason: "a revision the pod records is no longer stored" };
  if (canonicalJson(withoutInPlaceParts(from)) !== canonicalJson(withoutInPlaceParts(to))) {
    return { kind: "recreate", reason: "the change is more than metadata and the images of containers and native sidecars" };
  }
  return { kind: "in-place", operations: inPlaceOperations(live, from, to) };
}

/** The pod without what changes in place: metadata, images of containers and native sidecars. */
function withoutInPlaceParts(pod: Pod): unknown {
  const spec = pod.spec ?? { containers: [] };
  return {
    spec: {
      ...spec,
      containers: spec.containers.map((container) => ({ ...container, image: undefined })),
      initContainers: spec.initContainers?.map((container) => (isNativeSidecar(container) ? { ...container, image: undefined } : container)),
    },
  };
}

function isNativeSidecar(container: { restartPolicy?: string }): boolean {
  return container.restartPolicy === "Always";
}

/** The changes from `from` to `to`, applied to the live pod, guarded by its resourceVersion. */
function inPlaceOperations(live: LivePod, from: Pod, to: Pod): JsonPatchOperation[] {
  const operations: JsonPatchOperation[] = [{ op: "test", path: "/metadata/resourceVersion", value: live.metadata?.resourceVersion }];
  for (const field of ["labels", "annotations"] as const) {
    const before = from.metadata?.[field] ?? {};
    const after = to.metadata?.[field] ?? {};
    const current = live.metadata?.[field];
    const changes: JsonPatchOperation[] = [];
    for (const key of Object.keys(before)) {
      if (!(key in after) && current !== undefined && key in current) changes.push({ op: "remove", path: `/metadata/${field}/${pointerSegment(key)}` });
    }
    for (const [key, value] of Object.entries(after)) {
      if (current?.[key] !== value) changes.push({ op: "add", path: `/metadata/${field}/${pointerSegment(key)}`, value });
    }
    if (changes.length > 0 && current === undefined) operations.push({ op: "add", path: `/metadata/${field}`, value: {} });
    operations.push(...changes);
  }
  const restarted: Record<string, string> = {};
  for (const list of ["initContainers", "containers"] as const) {
    const wanted = new Map((to.spec?.[list] ?? []).map((container) => [container.name, container.image]));
    const statuses = list === "containers" ? live.status?.containerStatuses : live.status?.initContainerStatuses;
    // Against the live pod, not `from`: an image set back since (drift) is put back too.
    (live.spec?.[list] ?? []).forEach((container, index) => {
      const image = wanted.get(container.name);
      if (image === undefined || image === container.image) return;
      operations.push({ op: "replace", path: `/spec/${list}/${index}/image`, value: image });
      restarted[container.name] = statuses?.find((status) => status.name === container.name)?.containerID ?? "";
    });
  }
  if (Object.keys(restarted).length > 0) {
    if (live.metadata?.annotations === undefined && !operations.some((operation) => operation.path === "/metadata/annotations")) operations.push({ op: "add", path: "/metadata/annotations", value: {} });
    operations.push({ op: "add", path: `/metadata/annotations/${pointerSegment(RESTARTED_CONTAINERS_ANNOTATION)}`, value: JSON.stringify(restarted) });
  }
  return operations;
}
