// Which pods a selector selects (Kubernetes semantics; the parsing and validation live with
// the LabelSelector type in src/api). Compiled matchers are cached per selector object: the
// webhook tests every decoration of a namespace against every new pod, and objects from its
// caches are never mutated (DESIGN §7), so caching by identity is safe.
import { type LabelMatcher, type Labels, type LabelSelector, parseLabelSelector } from "../api/label-selector.ts";

export { parseLabelSelector, validateLabelSelector } from "../api/label-selector.ts";
export type { LabelMatcher, Labels, LabelSelector, ParsedLabelSelector } from "../api/label-selector.ts";

const compiled = new WeakMap<LabelSelector, LabelMatcher>();
const keysRead = new WeakMap<LabelSelector, ReadonlySet<string>>();
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
    compiled.set(selector, matcher);
  }
  return matcher(labels ?? {});
}

/** The label keys a selector's outcome depends on: it cannot change unless one of them does. */
export function selectorKeys(selector: LabelSelector): ReadonlySet<string> {
  let keys = keysRead.get(selector);
  if (keys === undefined) {
    keys = new Set([...Object.keys(selector.matchLabels ?? {}), ...(selector.matchExpressions ?? []).map((requirement) => requirement.key)]);
    keysRead.set(selector, keys);
  }
  return keys;
}
