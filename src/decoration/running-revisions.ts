// What a live pod runs of the decoration revisions it records (DESIGN §10, "Bookkeeping is not
// the pod author's"): the record is the pod's metadata, which its author may rewrite — claiming
// the updated revision while the old sidecar keeps running would pin it forever. So both rollout
// planners judge a pod by its containers: a recorded revision counts only when every container
// and native sidecar its template injects is in the pod with the image the template gives. A
// record the containers contradict counts as no record of that decoration: the pod is outdated,
// and the rollout moves it. Pure.
import type { Container } from "../api/kubernetes.ts";
import type { PodDecorationTemplate } from "../api/poddecoration.ts";

interface RunningPod {
  spec?: { containers?: readonly { name: string; image?: string | undefined }[]; initContainers?: readonly { name: string; image?: string | undefined }[] | undefined } | undefined;
}

/**
 * The recorded revisions the pod runs: `recorded` without the entries its containers
 * contradict. `template` gives a stored revision's template; a revision not stored (yet) is
 * kept, as nothing can be judged of it. A container that several recorded decorations inject
 * (a later one replaced it by name) is judged by none of them.
 */
export function runningRevisions(pod: RunningPod, recorded: ReadonlyMap<string, string>, template: (decoration: string, revision: string) => PodDecorationTemplate | undefined): Map<string, string> {
  const templates = new Map<string, PodDecorationTemplate | undefined>();
  const injectedBy = new Map<string, number>();
  for (const [decoration, revision] of recorded) {
    const found = template(decoration, revision);
    templates.set(decoration, found);
    for (const name of injectedNames(found)) injectedBy.set(name, (injectedBy.get(name) ?? 0) + 1);
  }
  const images = new Map<string, string | undefined>();
  for (const container of [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])]) images.set(`${container.name}`, container.image);
  const running = new Map<string, string>();
  for (const [decoration, revision] of recorded) {
    const found = templates.get(decoration);
    if (found === undefined || injected(found).every((container) => injectedBy.get(container.name) !== 1 || runs(images, container))) running.set(decoration, revision);
  }
  return running;
}

/** The containers and native sidecars a template injects (regular init containers run once and are gone). */
function injected(template: PodDecorationTemplate): Pick<Container, "name" | "image">[] {
  return [...(template.containers ?? []), ...(template.initContainers ?? []).filter((container) => container.restartPolicy === "Always")];
}

function injectedNames(template: PodDecorationTemplate | undefined): string[] {
  return template === undefined ? [] : injected(template).map((container) => container.name);
}

function runs(images: ReadonlyMap<string, string | undefined>, container: Pick<Container, "name" | "image">): boolean {
  if (!images.has(container.name)) return false;
  return container.image === undefined || images.get(container.name) === container.image;
}
