// What a PodDecoration may add to the cost of its namespace's pods, refused when it is written
// (DESIGN §10, "No namespace can stall another"; as the API server estimates a CEL expression's
// cost when it is written): a namespace holds at most so many decorations, and decorations may
// select one another through the labels they set only as deep as the engine's rounds reach.
// The namespace's decorations come from the webhook's cache, which a decoration written an
// instant before may not have reached yet: the controllers report what gets past (status).
import { forbiddenError, formatFieldError } from "../api/field-errors.ts";
import { POD_DECORATION_KIND } from "../api/group.ts";
import type { PodDecoration } from "../api/poddecoration.ts";
import { longestSelectionChain } from "../decoration/selection-chains.ts";
import { deny, type AdmissionRequest } from "./admission-review.ts";
import type { DecorationBounds } from "../decoration/engine-bounds.ts";
import type { AdmissionDecision } from "./server.ts";

/**
 * The refusal of `candidate` (the decoration as it will be stored) when it is over a bound,
 * else undefined. `others` are the namespace's decorations as cached.
 */
export function costDecision(request: AdmissionRequest, candidate: PodDecoration, others: readonly PodDecoration[], bounds: DecorationBounds): AdmissionDecision | undefined {
  const name = candidate.metadata.name ?? "";
  const namespace = candidate.metadata.namespace ?? "";
  const rest = others.filter((decoration) => (decoration.metadata.name ?? "") !== name);
  const refuse = (path: string, why: string): AdmissionDecision => ({
    response: deny(request.uid, 403, formatFieldError(POD_DECORATION_KIND, name, forbiddenError(path, why))),
    result: "rejected",
  });
  const held = rest.filter((decoration) => decoration.metadata.deletionTimestamp == null).length;
  if (request.operation === "CREATE" && held >= bounds.maxDecorationsPerNamespace) {
    return refuse("metadata.namespace", `namespace ${namespace} holds ${held} PodDecorations, the most one namespace may hold (${bounds.maxDecorationsPerNamespace}, the webhook's --max-decorations-per-namespace): every one is selected against each pod created there`);
  }
  const chain = longestSelectionChain([...rest, candidate]);
  if (chain.length > bounds.maxSelectionRounds && chain.includes(candidate)) {
    const names = chain.map((decoration) => decoration.metadata.name ?? "").join(" → ");
    return refuse(
      "spec",
      `with the labels it sets or selects, the namespace's decorations select one another ${chain.length} deep (${names}); a pod is given ${bounds.maxSelectionRounds} rounds of selection (the webhook's --max-selection-rounds), so a pod the first selects could not be decorated`,
    );
  }
  return undefined;
}
