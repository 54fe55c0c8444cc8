// Which pods a selector selects (Kubernetes semantics; the parsing and validation live with
// the LabelSelector type in src/api). Compiled matchers are cached per selector object: the
// webhook tests every decoration of a namespace against every new pod.
import { type LabelMatcher, type Labels, type LabelSelector, parseLabelSelector } from "../api/label-selector.ts";

export { parseLabelSelector, validateLabelSelector } from "../api/label-selector.ts";
export type { LabelMatcher, Labels, LabelSelector, ParsedLabelSelector } from "../api/label-selector.ts";

const compiled = new WeakMap<LabelSelector, LabelMatcher>();
const matchesNothing: LabelMatcher = () => false;

/**
 * Whether `labels` satisfy `selector`. `{}` selects everything; a missing selector and an
 * invalid one select nothing, as apimachinery's LabelSelectorAsSelector treats them.
 */
export function selectorMatches(selector: LabelSelector | null | undefined, labels: Labels | undefined): boolean {
  if (selector === null || selector === undefined) return false;
  let matcher = compiled.get(selector);
  if (matcher === undefined) {
    const parsed = parseLabelSelector(selector);
    matcher = parsed.ok ? parsed.matches : matchesNothing;
    // Selectors from caches are never mutated (DESIGN §7), so caching by identity is safe.
    compiled.set(selector, matcher);
  }
  return matcher(labels ?? {});
}
