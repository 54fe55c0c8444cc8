// Admission warnings for a valid CollaSet: every KusionStack field this project accepts, so
// that KusionStack manifests apply unchanged, but does not act on is named when it is set —
// nothing is accepted and then ignored in silence.
import type { CollaSet } from "./collaset.ts";
import { withoutNullFields } from "./null-fields.ts";

interface IgnoredField {
  path: string;
  isSet: (spec: CollaSet["spec"]) => boolean;
  /** What happens instead. */
  instead: string;
}

const IGNORED_FIELDS: readonly IgnoredField[] = [
  {
    path: "spec.namingStrategy.podNamingSuffixPolicy",
    isSet: (spec) => !["", "Random", "PersistentSequence"].includes(spec.namingStrategy?.podNamingSuffixPolicy ?? ""),
    instead: "a value other than PersistentSequence or Random names pods as Random does (<collaset>-<random>)",
  },
  // kube-xset (x_scale.go) delays scale-in by updateStrategy.operationDelaySeconds and reads this one nowhere: nor does this project.
  { path: "spec.scaleStrategy.operationDelaySeconds", isSet: (spec) => spec.scaleStrategy?.operationDelaySeconds !== undefined, instead: "as in kuperator, a scale-in waits updateStrategy.operationDelaySeconds instead" },
];

/** The paths of the fields that are accepted but not acted on. */
export const COLLASET_IGNORED_FIELDS: readonly string[] = IGNORED_FIELDS.map((field) => field.path);

/** Warnings about a (valid) CollaSet: one per field set that is not acted on. */
export function collaSetWarnings(cls: CollaSet): string[] {
  const { spec } = withoutNullFields(cls);
  return IGNORED_FIELDS.filter((field) => field.isSet(spec)).map((field) => `${field.path}: accepted so KusionStack manifests apply, but not acted on: ${field.instead}.`);
}
