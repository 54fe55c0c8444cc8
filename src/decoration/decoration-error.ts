// A decoration that cannot be rendered: its spec is invalid (stored while no validating
// webhook ran), its revision is unusable, or rendering it into this pod would make a pod the
// API server refuses. The message names the decoration; the pod webhook admits or refuses
// the pod as `onDecorationError` says, the controllers report it.
import { describeKey } from "./decoration-kind.ts";
export class DecorationError extends Error {
  /** `decoration.name` is the decoration's key (decoration-kind.ts): a ClusterPodDecoration says so. */
  constructor(decoration: { namespace?: string | undefined; name?: string | undefined }, reason: string) {
    super(`${describeKey(decoration.name ?? "", decoration.namespace)}: ${reason}`);
  }
}

/**
 * A pod's decorations could not be selected and rendered within the engine's bounds (DESIGN §10,
 * "No namespace can stall another"): more rounds of selection than allowed, or the request's
 * time ran out. Handled as a decoration that cannot be rendered is: `onDecorationError` decides.
 */
export class DecorationBoundsError extends DecorationError {}
