// Which pods a selector selects (Kubernetes semantics; the parsing and validation live with
// the LabelSelector type in src/api). Compiled matchers are cached per selector object: the
// webhook tests every decoration of a namespace against every new pod, and objects from its
// caches are never mutated (DESIGN §7), so caching by identity is safe.
import { Compile } from "typebox/compile";
import { type LabelMatcher, type Labels, type LabelSelector, LabelSelectorSchema, parseLabelSelector } from "../api/label-selector.ts";

export { parseLabelSelector, validateLabelSelector } from "../api/label-selector.ts";
export type { LabelMatcher, Labels, LabelSelector, ParsedLabelSelector } from "../api/label-selector.ts";

const compiled = new WeakMap<LabelSelector, LabelMatcher>();
const keysRead = new WeakMap<LabelSelector, readonly string[]>();
const matchesNothing: LabelMatcher = () => false;
const noKeys: readonly string[] = Object.freeze([]);
// Cached decorations may predate validation (written before the webhook, or under a looser
// CRD): a selector of the wrong shape is treated like an invalid one, never trusted.
const selectorShape = Compile(LabelSelectorSchema);

/**
 * Whether `labels` satisfy `selector`. `{}` selects everything; a missing selector and an
 * invalid one select nothing, as apimachinery's LabelSelectorAsSelector treats them.
 */
export function selectorMatches(selector: LabelSelector | null | undefined, labels: Labels | undefined): boolean {
  if (!isSelectorObject(selector)) return false;
  return matcherOf(selector)(labels ?? {});
}

/** Whether the selector means what it says: present, of the right shape and valid (else it selects nothing). */
export function isValidSelector(selector: LabelSelector | null | undefined): boolean {
  return isSelectorObject(selector) && matcherOf(selector) !== matchesNothing;
}

function matcherOf(selector: LabelSelector): LabelMatcher {
  let matcher = compiled.get(selector);
  if (matcher === undefined) {
    const parsed = selectorShape.Check(selector) ? parseLabelSelector(selector) : undefined;
    matcher = parsed?.ok === true ? parsed.matches : matchesNothing;
    compiled.set(selector, matcher);
  }
  return matcher;
}

/**
 * The label keys a selector's outcome depends on, each once: it cannot change unless one of
 * them does. A list, not a Set: the webhook reads it for every decoration a rendered pod's
 * labels might now select, and a list is read without allocating.
 */
export function selectorKeys(selector: LabelSelector | null | undefined): readonly string[] {
  // A selector that selects nothing whatever the labels depends on none of them.
  if (!isSelectorObject(selector)) return noKeys;
  let keys = keysRead.get(selector);
  if (keys === undefined) {
    keys = selectorShape.Check(selector)
      ? Object.freeze([...new Set([...Object.keys(selector.matchLabels ?? {}), ...(selector.matchExpressions ?? []).map((requirement) => requirement.key)])])
      : noKeys;
    keysRead.set(selector, keys);
  }
  return keys;
}

function isSelectorObject(selector: unknown): selector is LabelSelector {
  return typeof selector === "object" && selector !== null && !Array.isArray(selector);
}
