// A test's or benchmark's own view of a namespace's pods: an informer (list + watch) whose
// every event re-checks what the caller waits for, so a wait ends at the event that satisfies
// it rather than at the next poll, and listeners see every state a pod passed through.
import { pino } from "pino";
import { Informer } from "../../src/controller/runtime/informer.ts";
import type { KubeClient } from "../../src/kube/client.ts";
import { restListWatch } from "../../src/kube/list-watch.ts";
import type { Pod } from "../../src/kube/objects.ts";
import { resources } from "../../src/kube/resources.ts";

export class PodWatch {
  readonly #informer: Informer<Pod>;
  readonly #namespace: string;
  readonly #stop = new AbortController();
  readonly #running: Promise<void>;
  readonly #listeners = new Set<(pod: Pod) => void>();

  private constructor(kube: KubeClient, namespace: string) {
    this.#namespace = namespace;
    this.#informer = new Informer<Pod>({ name: `watched-pods-${namespace}`, listWatch: restListWatch<Pod>(kube.rest, resources.pods, { namespace }), logger: pino({ level: "silent" }) });
    const changed = (pod: Pod) => {
      for (const listener of [...this.#listeners]) listener(pod);
    };
    this.#informer.addEventHandler({ onAdd: changed, onUpdate: (_old, pod) => changed(pod), onDelete: changed });
    this.#running = this.#informer.run(this.#stop.signal);
  }

  static async start(kube: KubeClient, namespace: string): Promise<PodWatch> {
    const watch = new PodWatch(kube, namespace);
    await watch.waitFor(() => (watch.#informer.hasSynced() ? true : undefined), 30_000, "the pod watch to sync", 50);
    return watch;
  }

  pods(): Pod[] {
    return this.#informer.cache.list(this.#namespace);
  }

  get(name: string): Pod | undefined {
    return this.#informer.cache.get(this.#namespace, name);
  }

  /** Calls listener with every pod that changes (added, updated, deleted) until the returned removal. */
  onPod(listener: (pod: Pod) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Resolves with check's first value other than undefined, re-checked at every pod event (and every pollMs). */
  waitFor<T>(check: () => T | undefined, timeoutMs: number, what: string, pollMs = 1000): Promise<T> {
    return new Promise((resolve, reject) => {
      let remove = () => {};
      const finish = (value: T) => {
        remove();
        clearTimeout(timeout);
        clearInterval(poll);
        resolve(value);
      };
      const attempt = () => {
        const value = check();
        if (value !== undefined) finish(value);
      };
      const timeout = setTimeout(() => {
        remove();
        clearInterval(poll);
        reject(new Error(`timed out after ${timeoutMs}ms waiting for ${what}`));
      }, timeoutMs);
      const poll = setInterval(attempt, pollMs);
      remove = this.onPod(attempt);
      attempt();
    });
  }

  async stop(): Promise<void> {
    this.#stop.abort();
    await this.#running;
  }
}

/** The pod's spec names `image` for `container`, the node reports it running, and the pod is Ready. */
export function runsImage(pod: Pod, container: string, image: string): boolean {
  if (pod.metadata?.deletionTimestamp != null) return false;
  if (pod.spec?.containers.find((entry) => entry.name === container)?.image !== image) return false;
  if (pod.status?.containerStatuses?.find((entry) => entry.name === container)?.image !== image) return false;
  return pod.status.conditions?.some((condition) => condition.type === "Ready" && condition.status === "True") === true;
}

export function specNames(pod: Pod, container: string, image: string): boolean {
  return pod.spec?.containers.find((entry) => entry.name === container)?.image === image;
}
