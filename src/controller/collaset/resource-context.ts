// The ResourceContext a CollaSet records its instance ids in (api/resource-context.ts), kept as
// kuperator keeps it (kube-xset resourcecontexts/resource_context.go): named after the CollaSet,
// or after scaleStrategy.context, which several CollaSets share to draw ids from one pool; one
// entry per id in use with the owner's name under "Owner", the template revision under
// "Revision", and a replace pair's ids; deleted once it holds no entry. An entry's other data
// (kuperator's own keys) is kept. Pure: the reconciler reads the cache and writes what this says.
import type { CollaSet } from "../../api/collaset.ts";
import type { ContextDetail, ResourceContextSpec } from "../../api/resource-context.ts";
import type { KubeObject, Pod } from "../../kube/objects.ts";
import { instanceIdOf, templateRevisionOf } from "./pod-state.ts";
import { replacePairs } from "./replace-plan.ts";

export type CachedResourceContext = KubeObject & { spec?: ResourceContextSpec };

/** kube-xset's default context keys. */
export const CONTEXT_KEYS = {
  owner: "Owner",
  revision: "Revision",
  replaceNewId: "ReplaceNewTargetID",
  replaceOriginId: "ReplaceOriginTargetID",
} as const;
const MANAGED_KEYS: readonly string[] = Object.values(CONTEXT_KEYS);

export function contextNameOf(collaSet: CollaSet): string {
  const shared = collaSet.spec.scaleStrategy?.context ?? "";
  return shared === "" ? (collaSet.metadata.name ?? "") : shared;
}

export function isSharedContext(collaSet: CollaSet): boolean {
  return (collaSet.spec.scaleStrategy?.context ?? "") !== "";
}

function ownerOf(detail: ContextDetail): string | undefined {
  return detail.data?.[CONTEXT_KEYS.owner];
}

/** The ids other owners record in a shared context: no pod of this CollaSet may take them. */
export function idsHeldByOthers(context: CachedResourceContext | undefined, owner: string): Set<number> {
  return new Set((context?.spec?.contexts ?? []).filter((detail) => ownerOf(detail) !== owner).map((detail) => detail.id));
}

/**
 * What to record for each id the CollaSet uses: every pod given with an id (the caller gives
 * those that hold one: naming.ts holdsInstanceId; of a pod awaiting replacement and its
 * replacement, the live one's data) and each pod about to be created, with its template
 * revision and replace pair.
 */
export function recordedIds(owner: string, pods: readonly Pod[], creates: readonly { instanceId: number; pod: Pod }[]): Map<number, Record<string, string>> {
  const ids = new Map<number, Record<string, string>>();
  const record = (id: number, pod: Pod) => {
    const revision = templateRevisionOf(pod);
    ids.set(id, { [CONTEXT_KEYS.owner]: owner, ...(revision === undefined ? {} : { [CONTEXT_KEYS.revision]: revision }) });
  };
  const live = new Map<number, Pod>();
  for (const pod of pods) {
    const id = instanceIdOf(pod);
    if (id === undefined) continue;
    if (!ids.has(id) || pod.metadata?.deletionTimestamp == null) record(id, pod);
    if (pod.metadata?.deletionTimestamp == null) live.set(id, pod);
  }
  for (const { instanceId, pod } of creates) record(instanceId, pod);
  const pairs = replacePairs(live);
  for (const [originId, surge] of pairs.surgeOf) {
    const surgeId = instanceIdOf(surge)!;
    ids.get(originId)![CONTEXT_KEYS.replaceNewId] = String(surgeId);
    ids.get(surgeId)![CONTEXT_KEYS.replaceOriginId] = String(originId);
  }
  return ids;
}

export type ContextWrite =
  | { kind: "none" }
  | { kind: "create"; spec: ResourceContextSpec }
  | { kind: "replace"; spec: ResourceContextSpec }
  | { kind: "delete" };

export interface ContextWriteInput {
  context: CachedResourceContext | undefined;
  owner: string;
  /** A shared context keeps other owners' entries; the CollaSet's own drops them, as kuperator does. */
  shared: boolean;
  ids: ReadonlyMap<number, Record<string, string>>;
}

/** The write that makes the context record `ids` for `owner`, or none when it does already. */
export function contextWrite(input: ContextWriteInput): ContextWrite {
  const existing = input.context?.spec?.contexts ?? [];
  const kept = new Map(existing.filter((detail) => ownerOf(detail) === input.owner).map((detail) => [detail.id, detail.data ?? {}]));
  const details: ContextDetail[] = input.shared ? existing.filter((detail) => ownerOf(detail) !== input.owner && !input.ids.has(detail.id)) : [];
  for (const [id, data] of input.ids) {
    const other = Object.fromEntries(Object.entries(kept.get(id) ?? {}).filter(([key]) => !MANAGED_KEYS.includes(key)));
    details.push({ id, data: { ...other, ...data } });
  }
  details.sort((a, b) => a.id - b.id);
  if (details.length === 0) return input.context === undefined ? { kind: "none" } : { kind: "delete" };
  if (input.context === undefined) return { kind: "create", spec: { contexts: details } };
  return sameDetails(existing, details) ? { kind: "none" } : { kind: "replace", spec: { contexts: details } };
}

function sameDetails(a: readonly ContextDetail[], b: readonly ContextDetail[]): boolean {
  if (a.length !== b.length) return false;
  return a.every((detail, index) => {
    const other = b[index]!;
    const [x, y] = [detail.data ?? {}, other.data ?? {}];
    return detail.id === other.id && Object.keys(x).length === Object.keys(y).length && Object.entries(x).every(([key, value]) => y[key] === value);
  });
}
