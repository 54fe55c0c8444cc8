// Carries out what in-exclude.ts decides, as kube-xset's excludeTarget / includeTarget do
// (synccontrols/x_scale.go): a leaving pod's claims, then the pod, lose the CollaSet's
// ownerReference and are labelled collaset.kusionstack.io/orphaned: "true" (kube-api
// PodOrphanedIndicateLabelKey; the instance id stays on them); a joining pod's claims, then the
// pod, get the instance id, lose the orphaned label and gain the CollaSet as controller. Each write
// is a JSON Patch guarded by the object's resourceVersion. Refusals are Events on the CollaSet and
// on the pod (kuperator's ExcludeIncludeNotAllowed).
import { API_VERSION, COLLASET_KIND, isOurGroup } from "../../api/group.ts";
import { isLostRace, isNotFound, statusMessage } from "../../kube/errors.ts";
import type { KubeObject, PersistentVolumeClaim, Pod } from "../../kube/objects.ts";
import type { JsonPatchOperation } from "../../kube/patch.ts";
import type { ResourceClient } from "../../kube/resource-client.ts";
import { labelOperations } from "../label-patch.ts";
import type { Lister } from "../runtime/cache.ts";
import type { EventRecorder } from "../runtime/event-recorder.ts";
import type { Expectations } from "../runtime/expectations.ts";
import { ORPHANED_LABEL } from "./claims.ts";
import { planInExclude, type InExcludePlan } from "./in-exclude.ts";
import { INSTANCE_ID_LABEL, instanceIdOf } from "./pod-state.ts";
import { holdsInstanceId } from "./naming.ts";
import type { CollaSet } from "../../api/collaset.ts";
import type { CachedCollaSet } from "./reconciler.ts";

export interface InExcludeWritesOptions {
  pods: Lister<Pod>;
  claims: Lister<PersistentVolumeClaim>;
  client: {
    pods: Pick<ResourceClient<Pod>, "jsonPatch">;
    claims: Pick<ResourceClient<PersistentVolumeClaim>, "jsonPatch">;
  };
  expectations: Expectations;
  events: Pick<EventRecorder, "record">;
}

/** The object without the CollaSet's ownerReference, labelled orphaned. */
export function excludeOperations(object: KubeObject, collaSetUid: string | undefined): JsonPatchOperation[] {
  const references = object.metadata?.ownerReferences ?? [];
  return [
    ...labelOperations(object, { [ORPHANED_LABEL]: "true" }, []),
    { op: "replace", path: "/metadata/ownerReferences", value: references.filter((reference) => reference.uid !== collaSetUid) },
  ];
}

/** The object with the instance id, without the orphaned label, the CollaSet its controller (a reference to an older CollaSet of the name replaced). */
export function includeOperations(object: KubeObject, collaSet: CachedCollaSet, instanceId: number): JsonPatchOperation[] {
  const { name, uid } = collaSet.metadata;
  const others = (object.metadata?.ownerReferences ?? []).filter((reference) => !(reference.kind === COLLASET_KIND && isOurGroup(reference.apiVersion) && reference.name === name));
  return [
    ...labelOperations(object, { [INSTANCE_ID_LABEL]: String(instanceId) }, [ORPHANED_LABEL]),
    { op: object.metadata?.ownerReferences === undefined ? "add" : "replace", path: "/metadata/ownerReferences", value: [...others, { apiVersion: API_VERSION, kind: COLLASET_KIND, name, uid, controller: true, blockOwnerDeletion: true }] },
  ];
}

export class InExcludeWrites {
  readonly #options: InExcludeWritesOptions;

  constructor(options: InExcludeWritesOptions) {
    this.#options = options;
  }

  /** What leaves and joins, from the caches; `reserved`: ids no joining pod may take beside those of `owned`. */
  plan(collaSet: CollaSet, owned: readonly Pod[], reserved: ReadonlySet<number>): InExcludePlan {
    const namespace = collaSet.metadata.namespace ?? "";
    return planInExclude({
      collaSet,
      owned,
      pod: (name) => this.#options.pods.get(namespace, name),
      claim: (name) => this.#options.claims.get(namespace, name),
      occupied: new Set([...reserved, ...owned.filter((pod) => holdsInstanceId(collaSet, pod)).map(instanceIdOf).filter((id) => id !== undefined)]),
    });
  }

  /** Reports the refusals; carries out the rest; returns the failures. */
  async apply(key: string, collaSet: CachedCollaSet, plan: InExcludePlan): Promise<Error[]> {
    const { events } = this.#options;
    for (const refusal of plan.refusals) {
      events.record(collaSet, "Warning", refusal.reason, refusal.message);
      if (refusal.pod !== undefined) events.record(refusal.pod, "Warning", "ExcludeIncludeNotAllowed", `${refusal.message} (CollaSet ${collaSet.metadata.name ?? ""})`);
    }
    const failures: Error[] = [];
    const attempt = async (what: string, write: () => Promise<void>): Promise<boolean> => {
      try {
        await write();
        return true;
      } catch (error) {
        if (!isNotFound(error) && !isLostRace(error)) failures.push(new Error(`${what}: ${statusMessage(error)}`, { cause: error }));
        return false;
      }
    };
    const uid = collaSet.metadata.uid;
    for (const { pod, claims } of plan.exclude) {
      const name = pod.metadata?.name ?? "";
      // Claims first: a claim left owned behind a pod that left would be deleted as scaled in.
      let claimsLeft = true;
      for (const claim of claims) claimsLeft = (await attempt(`excluding claim ${claim.metadata?.name ?? ""} of pod ${name}`, () => this.#patchClaim(key, claim, excludeOperations(claim, uid)))) && claimsLeft;
      if (!claimsLeft) continue;
      if (await attempt(`excluding pod ${name}`, () => this.#patchPod(key, pod, excludeOperations(pod, uid)))) {
        events.record(collaSet, "Normal", "Excluded", `pod ${name}${claims.length === 0 ? "" : ` and claims ${claims.map((claim) => claim.metadata?.name ?? "").join(", ")}`} left the CollaSet (instance ${pod.metadata?.labels?.[INSTANCE_ID_LABEL] ?? "?"} freed)`);
      }
    }
    for (const { pod, claims, instanceId } of plan.include) {
      const name = pod.metadata?.name ?? "";
      let claimsJoined = true;
      for (const claim of claims) claimsJoined = (await attempt(`including claim ${claim.metadata?.name ?? ""} of pod ${name}`, () => this.#patchClaim(key, claim, includeOperations(claim, collaSet, instanceId)))) && claimsJoined;
      if (!claimsJoined) continue;
      if (await attempt(`including pod ${name}`, () => this.#patchPod(key, pod, includeOperations(pod, collaSet, instanceId)))) {
        events.record(collaSet, "Normal", "Included", `pod ${name}${claims.length === 0 ? "" : ` and claims ${claims.map((claim) => claim.metadata?.name ?? "").join(", ")}`} joined the CollaSet as instance ${instanceId}`);
      }
    }
    return failures;
  }

  async #patchPod(key: string, pod: Pod, operations: JsonPatchOperation[]): Promise<void> {
    const { namespace = "", name = "", resourceVersion } = pod.metadata ?? {};
    await this.#options.client.pods.jsonPatch(namespace, name, operations);
    this.#options.expectations.expect(key, () => this.#options.pods.get(namespace, name)?.metadata?.resourceVersion !== resourceVersion);
  }

  async #patchClaim(key: string, claim: PersistentVolumeClaim, operations: JsonPatchOperation[]): Promise<void> {
    const { namespace = "", name = "", resourceVersion } = claim.metadata ?? {};
    await this.#options.client.claims.jsonPatch(namespace, name, operations);
    this.#options.expectations.expect(key, () => this.#options.claims.get(namespace, name)?.metadata?.resourceVersion !== resourceVersion);
  }
}
