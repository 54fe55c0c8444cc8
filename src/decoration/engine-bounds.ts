// What one pod's selection and rendering may cost (DESIGN §10, "No namespace can stall
// another"), as Kubernetes bounds CEL: what can be counted when a decoration is written is
// capped then (decorations per namespace: namespace-limit.ts; how deep decorations select
// each other through the labels they set: selection-chains.ts), and what cannot is bounded
// per request here: rounds of selection, and time.

import { DEFAULT_MAX_DECORATIONS_PER_NAMESPACE } from "./namespace-limit.ts";

/** A budget of time for one pod, read from an injected clock. */
export interface RenderBudget {
  /** Whether the time is up. */
  spent(): boolean;
  /** The budget's length, for messages. */
  readonly milliseconds: number;
}

export interface EngineBounds {
  /**
   * How many times selection may run on the labels rendering set: 1 means decorations select
   * only the pod's own labels; each more round lets decorations select labels the decorations
   * of the round before set.
   */
  maxSelectionRounds: number;
  /** The request's time: checked before each decoration is rendered. */
  budget?: RenderBudget | undefined;
}

/**
 * Four rounds: a pod's labels select a decoration whose labels select another, four deep at
 * most — room for a decoration that marks pods for a mesh and the mesh's own decoration, twice
 * over, while a chain costs at most four renders of the namespace's decorations.
 */
export const DEFAULT_MAX_SELECTION_ROUNDS = 4;

/** What one pod's decorations may cost, and what admission therefore refuses: serve's flags. */
export interface DecorationBounds {
  /** Decorations one namespace may hold: admission refuses the one over, the newest beyond are inert (namespace-limit.ts). */
  maxDecorationsPerNamespace: number;
  maxSelectionRounds: number;
}

export const DEFAULT_DECORATION_BOUNDS: DecorationBounds = {
  maxDecorationsPerNamespace: DEFAULT_MAX_DECORATIONS_PER_NAMESPACE,
  maxSelectionRounds: DEFAULT_MAX_SELECTION_ROUNDS,
};

export const UNBOUNDED_TIME: RenderBudget = { spent: () => false, milliseconds: Number.POSITIVE_INFINITY };

/** A budget that is spent `milliseconds` after `start`, by `now` (performance.now by default). */
export function budgetUntil(start: number, milliseconds: number, now: () => number = () => performance.now()): RenderBudget {
  const end = start + milliseconds;
  return { spent: () => now() >= end, milliseconds };
}
