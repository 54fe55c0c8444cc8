// Schema constructors for the shapes Kubernetes' structural OpenAPI v3 accepts, so that the
// TypeBox schemas in this folder serve unchanged as CRD `openAPIV3Schema` fragments, as
// runtime validators and, through `Static<>`, as TypeScript types. TypeBox's own `Enum`,
// `Record` and `Union` emit `const`, `patternProperties` and typed `anyOf` branches, which a
// structural schema forbids; these emit the Kubernetes form instead.
import Type, { type Static, type TObject, type TObjectOptions, type TProperties, type TSchemaOptions, type TString, type TUnsafe } from "typebox";
import { DNS1123_LABEL, DNS1123_LABEL_MAX_LENGTH, DNS1123_SUBDOMAIN, DNS1123_SUBDOMAIN_MAX_LENGTH, LABEL_VALUE, LABEL_VALUE_MAX_LENGTH } from "./names.ts";

/** A string restricted to `values`: `{type: string, enum: [...]}`. */
export function StringEnum<const Values extends readonly string[]>(values: Values, options: TSchemaOptions = {}): TUnsafe<Values[number]> {
  return Type.Unsafe<Values[number]>({ ...options, type: "string", enum: [...values] });
}

/** A map of strings (labels, annotations, matchLabels): `{type: object, additionalProperties: {type: string}}`. */
export function StringMap(options: TSchemaOptions = {}): TUnsafe<Record<string, string>> {
  return Type.Unsafe<Record<string, string>>({ ...options, type: "object", additionalProperties: { type: "string" } });
}

// The limits Kubernetes' own validation puts on names and label values, carried into the CRDs
// so the API server refuses what a pod could never carry before our webhook reads it; at
// runtime the rules in names.ts say the same in Kubernetes' words (schema-validation.ts).

/** A DNS-1123 label (container and volume names): at most 63 characters. */
export function Dns1123Label(options: TSchemaOptions = {}): TString {
  return Type.String({ ...options, maxLength: DNS1123_LABEL_MAX_LENGTH, pattern: DNS1123_LABEL.source });
}

/** A DNS-1123 subdomain (object names, runtimeClassName): at most 253 characters. */
export function Dns1123Subdomain(options: TSchemaOptions = {}): TString {
  return Type.String({ ...options, maxLength: DNS1123_SUBDOMAIN_MAX_LENGTH, pattern: DNS1123_SUBDOMAIN.source });
}

/** A label value: at most 63 characters, empty allowed. */
export function LabelValue(options: TSchemaOptions = {}): TString {
  return Type.String({ ...options, maxLength: LABEL_VALUE_MAX_LENGTH, pattern: LABEL_VALUE.source });
}

/** A map of labels (keys are checked at runtime: a structural schema cannot constrain keys). */
export function LabelMap(options: TSchemaOptions = {}): TUnsafe<Record<string, string>> {
  return Type.Unsafe<Record<string, string>>({ ...options, type: "object", additionalProperties: LabelValue() });
}

/** Kubernetes' IntOrString (`maxUnavailable: 1` or `"25%"`). */
export function IntOrString(options: TSchemaOptions = {}): TUnsafe<number | string> {
  return Type.Unsafe<number | string>({ ...options, anyOf: [{ type: "integer" }, { type: "string" }], "x-kubernetes-int-or-string": true });
}

/** An object kept as is: its fields are neither validated nor pruned (probes, resources, volume sources…). */
export function OpenObject(options: TSchemaOptions = {}): TUnsafe<Record<string, unknown>> {
  return Type.Unsafe<Record<string, unknown>>({ ...options, type: "object", "x-kubernetes-preserve-unknown-fields": true });
}

/** Marks an object schema whose declared fields are validated while every other field is kept. */
export const PRESERVE_UNKNOWN_FIELDS = { "x-kubernetes-preserve-unknown-fields": true } as const;

/** The TypeScript side of an open object: the declared fields, and any others. */
export type Open<T> = T & { [field: string]: unknown };

/**
 * An object whose declared fields are validated, defaulted and typed while every other field
 * is kept: by the API server (`x-kubernetes-preserve-unknown-fields`) and by the TypeScript
 * type, so a container literal may carry `readinessProbe` without a cast.
 */
export function OpenObjectOf<Properties extends TProperties>(properties: Properties, options: TObjectOptions = {}): TUnsafe<Open<Static<TObject<Properties>>>> {
  return Type.Unsafe<Open<Static<TObject<Properties>>>>(Type.Object(properties, { ...options, ...PRESERVE_UNKNOWN_FIELDS }));
}
