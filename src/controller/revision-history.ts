// The ControllerRevision writes both controllers make (DESIGN §4): store the owner's current
// data as a revision (reuse, roll back, create), and prune the history. The decisions are
// src/revision/history.ts's; this is where they meet the API server.
import type { Logger } from "pino";
import { isAlreadyExists, isNotFound, statusMessage } from "../kube/errors.ts";
import type { ControllerRevision, KubeObject } from "../kube/objects.ts";
import type { ResourceClient } from "../kube/resource-client.ts";
import { buildControllerRevision } from "../revision/controller-revision.ts";
import { planRevision, revisionsToPrune, type StoredRevision } from "../revision/history.ts";
import { controlledByKey, controllerUidIndex, type Lister } from "./runtime/cache.ts";
import type { Result } from "./runtime/controller.ts";
import type { EventRecorder } from "./runtime/event-recorder.ts";

export interface RevisionOwner {
  object: KubeObject;
  apiVersion: string;
  kind: string;
  /** The label naming the owner on its revisions. */
  ownerLabelKey: string;
  /** Where its revisions live when not in its own namespace (a cluster-scoped owner's: the release namespace). */
  revisionNamespace?: string;
  /** Put before the owner's name in its revisions' (see CLUSTER_REVISION_PREFIX). */
  namePrefix?: string;
}

export type StoreResult =
  /** `name` holds the data and is the newest revision. */
  | { kind: "stored"; name: string }
  /** The name the data hashes to is taken by other data: bump collisionCount and try again. */
  | { kind: "collision"; name: string }
  /** Our own earlier create the cache has not shown yet: wait for it rather than guess. */
  | { kind: "wait" };

export interface RevisionHistoryOptions {
  revisions: Lister<ControllerRevision>;
  client: Pick<ResourceClient<ControllerRevision>, "create" | "jsonPatch" | "delete">;
  events: Pick<EventRecorder, "record">;
  logger: Pick<Logger, "info">;
}

/** An owner whose status counts hash collisions (DESIGN §4). */
export interface CollidingOwner extends KubeObject {
  status?: { collisionCount?: number };
}

export type Stored =
  | { kind: "stored"; name: string; history: StoredRevision[] }
  /** Not stored yet: what the reconcile returns meanwhile. */
  | { kind: "requeue"; result: Result | undefined };

export class RevisionHistory {
  readonly #options: RevisionHistoryOptions;

  constructor(options: RevisionHistoryOptions) {
    this.#options = options;
  }

  /** The owner's revisions in the cache (found by the controller ownerReference's uid), in its own namespace or `namespace`. */
  of(owner: KubeObject, namespace?: string): StoredRevision[] {
    const key = namespace === undefined ? controlledByKey(owner) : controlledByKey({ metadata: { namespace, uid: owner.metadata?.uid } });
    return this.#options.revisions
      .byIndex(controllerUidIndex, key)
      .map((revision) => ({ name: revision.metadata?.name ?? "", revision: revision.revision, data: revision.data as unknown }));
  }

  /**
   * Makes `data` the owner's newest revision, the one way both controllers do: wait for our own
   * earlier create to show in the cache; on a hash collision, write collisionCount + 1 with
   * `escape` (the status update event reconciles again, hashing to another name).
   */
  async storeNewest(owner: RevisionOwner & { object: CollidingOwner }, data: unknown, escape: (collisionCount: number) => Promise<unknown>): Promise<Stored> {
    const history = this.of(owner.object, owner.revisionNamespace);
    const collisionCount = owner.object.status?.collisionCount ?? 0;
    const stored = await this.store(owner, data, collisionCount, history);
    if (stored.kind === "wait") return { kind: "requeue", result: { requeueAfter: 500 } };
    if (stored.kind === "collision") {
      const { namespace, name } = owner.object.metadata ?? {};
      this.#options.logger.info({ key: `${namespace ?? ""}/${name ?? ""}`, reason: `revision name ${stored.name} is taken by other data; collisionCount ${collisionCount + 1}` });
      await escape(collisionCount + 1);
      return { kind: "requeue", result: undefined };
    }
    return { kind: "stored", name: stored.name, history };
  }

  /** Makes `data` the owner's newest revision. */
  async store(owner: RevisionOwner, data: unknown, collisionCount: number, history: readonly StoredRevision[]): Promise<StoreResult> {
    const { name = "", uid = "" } = owner.object.metadata ?? {};
    const namespace = owner.revisionNamespace ?? owner.object.metadata?.namespace ?? "";
    const plan = planRevision(`${owner.namePrefix ?? ""}${name}`, data, collisionCount, history);
    switch (plan.kind) {
      case "reuse":
        return { kind: "stored", name: plan.name };
      case "collision":
        return { kind: "collision", name: plan.name };
      case "rollback":
        await this.#options.client.jsonPatch(namespace, plan.name, [{ op: "replace", path: "/revision", value: plan.revision }]);
        this.#options.events.record(owner.object, "Normal", "RevisionRolledBack", `rolled back to revision ${plan.name}, now ${plan.revision}`);
        return { kind: "stored", name: plan.name };
      case "create": {
        const revision = buildControllerRevision({
          owner: { apiVersion: owner.apiVersion, kind: owner.kind, name, namespace, uid },
          ownerLabelKey: owner.ownerLabelKey,
          data,
          hash: plan.hash,
          revision: plan.revision,
          namePrefix: owner.namePrefix,
        });
        try {
          await this.#options.client.create(revision);
        } catch (error) {
          if (isAlreadyExists(error)) return { kind: "wait" };
          throw error;
        }
        this.#options.events.record(owner.object, "Normal", "RevisionCreated", `stored revision ${plan.name} (${plan.revision})`);
        return { kind: "stored", name: plan.name };
      }
    }
  }

  /**
   * Deletes the oldest revisions beyond `limit`, never a protected one (current, updated, or
   * recorded by a live pod). `history` is what the cache held before `updated` was stored.
   */
  async prune(namespace: string, history: readonly StoredRevision[], updated: string | undefined, limit: number, protectedNames: ReadonlySet<string>): Promise<void> {
    const current = updated === undefined || history.some((item) => item.name === updated)
      ? history
      : [...history, { name: updated, revision: Number.MAX_SAFE_INTEGER, data: null }];
    for (const revision of revisionsToPrune(current, limit, protectedNames)) {
      try {
        await this.#options.client.delete(namespace, revision);
      } catch (error) {
        if (!isNotFound(error)) throw new Error(`deleting revision ${revision}: ${statusMessage(error)}`, { cause: error });
      }
    }
  }
}
