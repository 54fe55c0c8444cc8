// Carries out what resource-context.ts decides: the CollaSet's instance ids recorded in its
// ResourceContext before any pod takes a new one (so two CollaSets sharing a context never take
// the same id), and its entries removed when it is deleted. A write that lost a race (a stale
// resourceVersion) fails; the next sync reads the context again.
import type { CollaSet } from "../../api/collaset.ts";
import { API_VERSION, RESOURCE_CONTEXT_KIND } from "../../api/group.ts";
import { isNotFound } from "../../kube/errors.ts";
import type { KubeObject, Pod } from "../../kube/objects.ts";
import type { ResourceClient } from "../../kube/resource-client.ts";
import type { Lister } from "../runtime/cache.ts";
import type { Expectations } from "../runtime/expectations.ts";
import { holdsInstanceId } from "./naming.ts";
import { contextNameOf, contextWrite, idsHeldByOthers, isSharedContext, recordedIds, type CachedResourceContext } from "./resource-context.ts";

export interface ContextWritesOptions {
  contexts: Lister<CachedResourceContext>;
  client: Pick<ResourceClient<KubeObject>, "create" | "replace" | "delete">;
  expectations: Expectations;
}

export class ContextWrites {
  readonly #options: ContextWritesOptions;

  constructor(options: ContextWritesOptions) {
    this.#options = options;
  }

  /** Ids another CollaSet records in the shared context this one draws from. */
  reservedIds(collaSet: CollaSet): Set<number> {
    if (!isSharedContext(collaSet)) return new Set();
    return idsHeldByOthers(this.#options.contexts.get(collaSet.metadata.namespace, contextNameOf(collaSet)), collaSet.metadata.name ?? "");
  }

  /** Records the ids `pods` hold (a pod on its way out lets its id go) and those of the pods about to be created. */
  async record(key: string, collaSet: CollaSet, pods: readonly Pod[], creates: readonly { instanceId: number; pod: Pod }[]): Promise<void> {
    const owner = collaSet.metadata.name ?? "";
    await this.#write(key, collaSet.metadata.namespace ?? "", contextNameOf(collaSet), owner, isSharedContext(collaSet), recordedIds(owner, pods.filter((pod) => holdsInstanceId(collaSet, pod)), creates));
  }

  /** The deleted CollaSet's entries leave every context of its namespace (its own, or a shared one). */
  async release(key: string, namespace: string, owner: string): Promise<void> {
    for (const context of this.#options.contexts.list(namespace)) {
      if (!(context.spec?.contexts ?? []).some((detail) => detail.data?.Owner === owner)) continue;
      await this.#write(key, namespace, context.metadata?.name ?? "", owner, context.metadata?.name !== owner, new Map());
    }
  }

  async #write(key: string, namespace: string, name: string, owner: string, shared: boolean, ids: ReadonlyMap<number, Record<string, string>>): Promise<void> {
    const context = this.#options.contexts.get(namespace, name);
    const write = contextWrite({ context, owner, shared, ids });
    const { expectations } = this.#options;
    switch (write.kind) {
      case "none":
        return;
      case "create":
        await this.#options.client.create({ apiVersion: API_VERSION, kind: RESOURCE_CONTEXT_KIND, metadata: { name, namespace }, spec: write.spec } as KubeObject);
        expectations.expect(key, () => this.#options.contexts.get(namespace, name) !== undefined);
        return;
      case "replace": {
        const resourceVersion = context!.metadata?.resourceVersion;
        await this.#options.client.replace({ ...context!, spec: write.spec } as KubeObject);
        expectations.expect(key, () => this.#options.contexts.get(namespace, name)?.metadata?.resourceVersion !== resourceVersion);
        return;
      }
      case "delete":
        try {
          await this.#options.client.delete(namespace, name, { preconditions: { resourceVersion: context!.metadata?.resourceVersion } });
        } catch (error) {
          if (!isNotFound(error)) throw error;
        }
        expectations.expect(key, () => this.#options.contexts.get(namespace, name) === undefined);
        return;
    }
  }
}
