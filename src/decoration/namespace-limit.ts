// How many decorations a namespace's pods are rendered with (DESIGN §10, "No namespace can stall
// another"): a pod's selection and render cost grows with its namespace's decorations, so their
// number is capped. Admission refuses the decoration over the cap; those found over it anyway
// (written while no validating webhook ran, or kept when the cap was lowered) are the newest,
// and stay inert: no new pod gets them, no rollout moves a pod to or from them, and their status
// says so. Decorations being deleted count for nothing: they select no pod. Pure.
import type { PodDecoration } from "../api/poddecoration.ts";
import { isClusterDecoration } from "./decoration-kind.ts";

/** The chart's default (`admission.maxDecorationsPerNamespace`; see the README, Operations). */
export const DEFAULT_MAX_DECORATIONS_PER_NAMESPACE = 200;

export interface NamespaceLimit {
  /** The decorations within the cap, in the order given. */
  within: readonly PodDecoration[];
  /** The newest beyond it, oldest first. */
  over: readonly PodDecoration[];
  /** How many decorations count against the cap (not being deleted). */
  counted: number;
}

const none: readonly PodDecoration[] = Object.freeze([]);

/**
 * The decorations within `limit`, oldest first by creation time, then name. Costs one pass
 * when the namespace is within it (the usual case): the list given is returned as it is.
 */
export function withinNamespaceLimit(decorations: readonly PodDecoration[], limit: number): NamespaceLimit {
  if (decorations.length <= limit) return { within: decorations, over: none, counted: countLive(decorations) };
  const live = decorations.filter((decoration) => decoration.metadata.deletionTimestamp == null);
  if (live.length <= limit) return { within: decorations, over: none, counted: live.length };
  const over = new Set(live.sort(compareAge).slice(limit));
  return { within: decorations.filter((decoration) => !over.has(decoration)), over: [...over], counted: live.length };
}

function countLive(decorations: readonly PodDecoration[]): number {
  let count = 0;
  for (let index = 0; index < decorations.length; index++) if (decorations[index]!.metadata.deletionTimestamp == null) count++;
  return count;
}

/** ClusterPodDecorations first (the platform's count before any namespace's), then the oldest. */
function compareAge(a: PodDecoration, b: PodDecoration): number {
  const cluster = Number(isClusterDecoration(b)) - Number(isClusterDecoration(a));
  if (cluster !== 0) return cluster;
  const [createdA, createdB] = [a.metadata.creationTimestamp ?? "", b.metadata.creationTimestamp ?? ""];
  // RFC 3339 in UTC with whole seconds, as the API server writes it, sorts as text.
  if (createdA !== createdB) return createdA < createdB ? -1 : 1;
  const [nameA, nameB] = [a.metadata.name ?? "", b.metadata.name ?? ""];
  return nameA < nameB ? -1 : nameA > nameB ? 1 : 0;
}

/** Why a decoration over the limit is not applied: what its status and the pods' warnings say. */
export function overLimitMessage(namespace: string, counted: number, limit: number): string {
  return `namespace ${namespace} has ${counted} PodDecorations, more than the limit of ${limit}: the newest ${counted - limit} are not applied to new pods, and pods keep what they record of them`;
}
