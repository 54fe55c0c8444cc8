// The hash kuperator labels a CollaSet's claims with (collaset.kusionstack.io/pvc-template-hash),
// computed as it computes it, so claims it made are recognised here as made of the same
// template (and not replaced) when a CollaSet moves over. kube-xset's subresources/pvc_control.go
// (PvcTmpHash): Go's json.Marshal of the template as a core/v1 PersistentVolumeClaim of the
// k8s.io/api version kuperator builds with (v0.22.6: struct field order, omitempty, maps by
// key, quantities canonical, metadata.creationTimestamp null, fields that version lacks
// dropped), FNV-32 (not 32a) of those bytes, its decimal text in the safe alphabet.
import { canonicalQuantity } from "../api/quantity-canonical.ts";
import { SAFE_ALPHABET } from "./hash.ts";

type Json = Record<string, unknown>;

export function claimTemplateHash(template: unknown): string {
  const bytes = new TextEncoder().encode(goJson(claimDocument(asObject(template))));
  let hash = 0x811c9dc5;
  for (const byte of bytes) hash = (Math.imul(hash, 0x01000193) ^ byte) >>> 0;
  return [...String(hash)].map((digit) => SAFE_ALPHABET[digit.charCodeAt(0) % SAFE_ALPHABET.length]).join("");
}

/** The template with Go's field order and omissions; a Map keeps the order through serialisation. */
function claimDocument(template: Json): Map<string, unknown> {
  const metadata = asObject(template.metadata);
  const spec = asObject(template.spec);
  return fields([
    ["kind", omitEmpty(template.kind)],
    ["apiVersion", omitEmpty(template.apiVersion)],
    ["metadata", fields([
      ["name", omitEmpty(metadata.name)],
      ["generateName", omitEmpty(metadata.generateName)],
      ["namespace", omitEmpty(metadata.namespace)],
      ["uid", omitEmpty(metadata.uid)],
      ["resourceVersion", omitEmpty(metadata.resourceVersion)],
      ["creationTimestamp", typeof metadata.creationTimestamp === "string" ? metadata.creationTimestamp : null],
      ["labels", stringMap(metadata.labels)],
      ["annotations", stringMap(metadata.annotations)],
      ["finalizers", nonEmptyList(metadata.finalizers)],
    ])],
    ["spec", fields([
      ["accessModes", nonEmptyList(spec.accessModes)],
      ["selector", spec.selector == null ? undefined : selector(asObject(spec.selector))],
      ["resources", fields([["limits", quantities(asObject(spec.resources).limits)], ["requests", quantities(asObject(spec.resources).requests)]])],
      ["volumeName", omitEmpty(spec.volumeName)],
      ["storageClassName", typeof spec.storageClassName === "string" ? spec.storageClassName : undefined],
      ["volumeMode", typeof spec.volumeMode === "string" ? spec.volumeMode : undefined],
      ["dataSource", spec.dataSource == null ? undefined : objectReference(asObject(spec.dataSource))],
      ["dataSourceRef", spec.dataSourceRef == null ? undefined : objectReference(asObject(spec.dataSourceRef))],
    ])],
    ["status", new Map()],
  ]);
}

function selector(value: Json): Map<string, unknown> {
  const expressions = Array.isArray(value.matchExpressions) && value.matchExpressions.length > 0
    ? value.matchExpressions.map((item) => {
      const requirement = asObject(item);
      return fields([["key", text(requirement.key)], ["operator", text(requirement.operator)], ["values", nonEmptyList(requirement.values)]]);
    })
    : undefined;
  return fields([["matchLabels", stringMap(value.matchLabels)], ["matchExpressions", expressions]]);
}

function objectReference(value: Json): Map<string, unknown> {
  return fields([["apiGroup", typeof value.apiGroup === "string" ? value.apiGroup : null], ["kind", text(value.kind)], ["name", text(value.name)]]);
}

function quantities(value: unknown): Map<string, unknown> | undefined {
  const entries = Object.entries(asObject(value));
  if (entries.length === 0) return undefined;
  return new Map(entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([key, quantity]) => [key, canonicalQuantity(quantity) ?? String(quantity)]));
}

function stringMap(value: unknown): Map<string, unknown> | undefined {
  const entries = Object.entries(asObject(value));
  if (entries.length === 0) return undefined;
  return new Map(entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([key, item]) => [key, String(item)]));
}

function fields(entries: readonly (readonly [string, unknown])[]): Map<string, unknown> {
  return new Map(entries.filter(([, value]) => value !== undefined));
}

function text(value: unknown): string {
  return typeof value === "string" ? value : "";
}

function omitEmpty(value: unknown): string | undefined {
  return typeof value === "string" && value !== "" ? value : undefined;
}

function nonEmptyList(value: unknown): string[] | undefined {
  return Array.isArray(value) && value.length > 0 ? value.map(String) : undefined;
}

function asObject(value: unknown): Json {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Json) : {};
}

/** JSON as Go's encoding/json writes it: <, >, & and the line separators escaped. */
function goJson(value: unknown): string {
  if (value instanceof Map) return `{${[...value].map(([key, item]) => `${goString(String(key))}:${goJson(item)}`).join(",")}}`;
  if (Array.isArray(value)) return `[${value.map(goJson).join(",")}]`;
  if (typeof value === "string") return goString(value);
  return JSON.stringify(value);
}

function goString(text: string): string {
  return JSON.stringify(text).replace(/[<>&\u2028\u2029]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`);
}
