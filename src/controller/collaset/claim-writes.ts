// Carries out what claims.ts decides for one CollaSet: claims created before the pod that
// needs them, adopted, deleted, let go when the CollaSet is deleted under whenDeleted Retain,
// and the finalizer that makes the letting go come before the garbage collector.
import type { Pod } from "../../api/pod.ts";
import { API_VERSION, COLLASET_KIND } from "../../api/group.ts";
import { isNotFound } from "../../kube/errors.ts";
import type { KubeObject, PersistentVolumeClaim } from "../../kube/objects.ts";
import type { ResourceClient } from "../../kube/resource-client.ts";
import { addFinalizerOperation, hasFinalizer, removeFinalizerOperations } from "../finalizers.ts";
import { controlledByKey, controllerUidIndex, type Lister } from "../runtime/cache.ts";
import type { EventRecorder } from "../runtime/event-recorder.ts";
import type { Expectations } from "../runtime/expectations.ts";
import type { CollaSet } from "../../api/collaset.ts";
import { INSTANCE_ID_LABEL } from "./pod-state.ts";
import type { Pod as LivePod } from "../../kube/objects.ts";
import {
  claimsForInstance,
  claimsToAdopt,
  claimsToDelete,
  claimTemplateOf,
  instanceClaims,
  needsReclaimFinalizer,
  RECLAIM_FINALIZER,
  retentionPolicy,
  withClaimVolumes,
} from "./claims.ts";

type CachedCollaSet = CollaSet & KubeObject;

export interface ClaimWritesOptions {
  claims: Lister<PersistentVolumeClaim>;
  client: {
    claims: Pick<ResourceClient<PersistentVolumeClaim>, "create" | "delete" | "jsonPatch">;
    collaSets: Pick<ResourceClient<CachedCollaSet>, "jsonPatch">;
  };
  expectations: Expectations;
  events: Pick<EventRecorder, "record">;
}

export class ClaimWrites {
  readonly #options: ClaimWritesOptions;

  constructor(options: ClaimWritesOptions) {
    this.#options = options;
  }

  /** The CollaSet's claims, as the cache shows them. */
  owned(collaSet: CachedCollaSet): PersistentVolumeClaim[] {
    return this.#options.claims.byIndex(controllerUidIndex, controlledByKey(collaSet));
  }

  /** The pod to create for an instance, its claims created first (reused when the instance has them). */
  async bind(key: string, collaSet: CachedCollaSet, instanceId: number, pod: Pod): Promise<Pod> {
    if ((collaSet.spec.volumeClaimTemplates ?? []).length === 0) return pod;
    // Claims left to adopt count as the CollaSet's already, as kube-xset adds them to ExistingPvcs.
    const claims = [...this.owned(collaSet), ...claimsToAdopt(collaSet, this.#options.claims.list(collaSet.metadata.namespace ?? ""))];
    const { reuse, create } = claimsForInstance(collaSet, claims, instanceId);
    for (const { template, claim } of create) {
      const created = await this.#options.client.claims.create(claim);
      const { namespace = "", name = "" } = created.metadata ?? {};
      // Until the cache shows it, the next sync would make another one.
      this.#options.expectations.expect(key, () => this.#options.claims.get(namespace, name) !== undefined);
      this.#options.events.record(collaSet, "Normal", "SuccessfulCreateClaim", `created claim ${name} (template ${template}) for instance ${instanceId}`);
      reuse.set(template, name);
    }
    const leftover = new Map([...instanceClaims(collaSet, claims, instanceId).old].map(([template, claim]) => [template, claim.metadata?.name ?? ""]));
    return withClaimVolumes(pod, reuse, leftover);
  }

  /** Adoption, deletions and the finalizer, after the pods' actions. Returns the failures. */
  async sync(key: string, collaSet: CachedCollaSet, pods: readonly LivePod[]): Promise<Error[]> {
    const failures: Error[] = [];
    const attempt = async (what: string, write: () => Promise<void>) => {
      try {
        await write();
      } catch (error) {
        if (!isNotFound(error)) failures.push(new Error(`${what}: ${error instanceof Error ? error.message : String(error)}`, { cause: error }));
      }
    };
    const namespace = collaSet.metadata.namespace ?? "";
    if (needsReclaimFinalizer(collaSet) && !hasFinalizer(collaSet, RECLAIM_FINALIZER)) {
      await attempt("adding the finalizer that retains claims", async () => {
        await this.#options.client.collaSets.jsonPatch(namespace, collaSet.metadata.name ?? "", [
          { op: "test", path: "/metadata/resourceVersion", value: collaSet.metadata.resourceVersion },
          addFinalizerOperation(collaSet, RECLAIM_FINALIZER),
        ]);
      });
    }
    for (const claim of claimsToAdopt(collaSet, this.#options.claims.list(namespace))) {
      const name = claim.metadata?.name ?? "";
      await attempt(`adopting claim ${name}`, async () => {
        await this.#options.client.claims.jsonPatch(namespace, name, [
          { op: "test", path: "/metadata/resourceVersion", value: claim.metadata?.resourceVersion },
          { op: "add", path: "/metadata/ownerReferences", value: [{ apiVersion: API_VERSION, kind: COLLASET_KIND, name: collaSet.metadata.name, uid: collaSet.metadata.uid, controller: true, blockOwnerDeletion: true }] },
        ]);
        this.#expectChanged(key, claim);
        this.#options.events.record(collaSet, "Normal", "AdoptedClaim", `adopted claim ${name} left by a CollaSet deleted under whenDeleted Retain`);
      });
    }
    for (const { claim, reason } of claimsToDelete(collaSet, pods, this.owned(collaSet))) {
      const name = claim.metadata?.name ?? "";
      await attempt(`deleting claim ${name}`, async () => {
        await this.#options.client.claims.delete(namespace, name, claim.metadata?.uid === undefined ? {} : { preconditions: { uid: claim.metadata.uid } });
        this.#expectChanged(key, claim);
        this.#options.events.record(collaSet, "Normal", "SuccessfulDeleteClaim", `deleted claim ${name}: ${reason}`);
      });
    }
    return failures;
  }

  /**
   * The claims of an instance whose pod a replace removed (the origin once its surge pod serves,
   * or a cancelled surge pod), whatever whenScaled says: kube-xset deletes a replace pair's claims
   * with the pod (synccontrols/sync_control.go). PVC protection keeps them until the pod is gone.
   */
  async releaseInstance(key: string, collaSet: CachedCollaSet, instanceId: number, reason: string): Promise<void> {
    const namespace = collaSet.metadata.namespace ?? "";
    for (const claim of this.owned(collaSet)) {
      if (claim.metadata?.labels?.[INSTANCE_ID_LABEL] !== String(instanceId) || claim.metadata.deletionTimestamp != null) continue;
      const name = claim.metadata.name ?? "";
      try {
        await this.#options.client.claims.delete(namespace, name, claim.metadata.uid === undefined ? {} : { preconditions: { uid: claim.metadata.uid } });
      } catch (error) {
        if (!isNotFound(error)) throw error;
      }
      this.#expectChanged(key, claim);
      this.#options.events.record(collaSet, "Normal", "SuccessfulDeleteClaim", `deleted claim ${name}: ${reason}`);
    }
  }

  /**
   * A CollaSet being deleted: under whenDeleted Retain its claims lose their ownerReference
   * (kube-xset ensureReclaimPvcs), so the garbage collector leaves them; then the finalizer goes.
   */
  async reclaim(collaSet: CachedCollaSet): Promise<void> {
    if (!hasFinalizer(collaSet, RECLAIM_FINALIZER)) return;
    const namespace = collaSet.metadata.namespace ?? "";
    if (retentionPolicy(collaSet).whenDeleted === "Retain") {
      for (const claim of this.owned(collaSet)) {
        const references = claim.metadata?.ownerReferences ?? [];
        try {
          await this.#options.client.claims.jsonPatch(namespace, claim.metadata?.name ?? "", [
            { op: "test", path: "/metadata/ownerReferences", value: references },
            { op: "replace", path: "/metadata/ownerReferences", value: references.filter((reference) => reference.uid !== collaSet.metadata.uid) },
          ]);
        } catch (error) {
          if (!isNotFound(error)) throw error;
        }
        this.#options.events.record(collaSet, "Normal", "RetainedClaim", `claim ${claim.metadata?.name ?? ""} (template ${claimTemplateOf(collaSet.metadata.name ?? "", claim) ?? "?"}) is retained: whenDeleted is Retain`);
      }
    }
    await this.#options.client.collaSets.jsonPatch(namespace, collaSet.metadata.name ?? "", removeFinalizerOperations(collaSet, RECLAIM_FINALIZER));
  }

  #expectChanged(key: string, claim: PersistentVolumeClaim): void {
    const { namespace = "", name = "", resourceVersion } = claim.metadata ?? {};
    this.#options.expectations.expect(key, () => this.#options.claims.get(namespace, name)?.metadata?.resourceVersion !== resourceVersion);
  }
}
