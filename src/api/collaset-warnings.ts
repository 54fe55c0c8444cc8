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

const nonEmpty = (list: readonly unknown[] | undefined): boolean => list !== undefined && list.length > 0;

const IGNORED_FIELDS: readonly IgnoredField[] = [
  { path: "spec.namingStrategy", isSet: (spec) => spec.namingStrategy !== undefined, instead: "pods are named <collaset>-<random>" },
  { path: "spec.scaleStrategy.context", isSet: (spec) => (spec.scaleStrategy?.context ?? "") !== "", instead: "instance ids are kept per CollaSet, not shared through a ResourceContext" },
  { path: "spec.scaleStrategy.podToExclude", isSet: (spec) => nonEmpty(spec.scaleStrategy?.podToExclude), instead: "no pod is released from the CollaSet" },
  { path: "spec.scaleStrategy.podToInclude", isSet: (spec) => nonEmpty(spec.scaleStrategy?.podToInclude), instead: "no pod is adopted into the CollaSet" },
  { path: "spec.scaleStrategy.operationDelaySeconds", isSet: (spec) => spec.scaleStrategy?.operationDelaySeconds !== undefined, instead: "pods are scaled without a delay" },
];

/** The paths of the fields that are accepted but not acted on. */
export const COLLASET_IGNORED_FIELDS: readonly string[] = IGNORED_FIELDS.map((field) => field.path);

/** Warnings about a (valid) CollaSet: one per field set that is not acted on. */
export function collaSetWarnings(cls: CollaSet): string[] {
  const { spec } = withoutNullFields(cls);
  return IGNORED_FIELDS.filter((field) => field.isSet(spec)).map((field) => `${field.path}: accepted so KusionStack manifests apply, but not acted on: ${field.instead}.`);
}
