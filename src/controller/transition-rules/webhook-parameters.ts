// The parameters a PodTransitionRule webhook sends for each pod, read off the pod as kuperator
// reads them (processor/rules/common.go, after the downward API's ExtractFieldPathAsString): a
// literal `value`, else `valueFrom.fieldRef.fieldPath` — metadata.name, .namespace, .uid,
// .labels and .annotations (all of them as `key="value"` lines, or one as ['key']), and any
// other path of the pod's JSON (spec.nodeName, status.podIP, ...), a non-string value as JSON;
// "null" reads as "". Pure.
import type { Pod } from "../../kube/objects.ts";

export interface WebhookParameter {
  key?: string | undefined;
  value?: string | undefined;
  valueFrom?: { fieldRef?: Record<string, unknown> | undefined } | undefined;
}

export function webhookParameter(parameter: WebhookParameter, pod: Pod): string {
  if ((parameter.value ?? "") !== "") return parameter.value!;
  const fieldPath = parameter.valueFrom?.fieldRef?.fieldPath;
  if (typeof fieldPath !== "string" || fieldPath === "") throw new Error(`unexpected empty parameter ${parameter.key ?? ""}`);
  const value = fieldValue(pod, fieldPath);
  return value === "null" ? "" : value;
}

function fieldValue(pod: Pod, fieldPath: string): string {
  const metadata = pod.metadata ?? {};
  const subscript = /^(metadata\.(?:labels|annotations))\['(.*)'\]$/.exec(fieldPath);
  if (subscript !== null) {
    const map = subscript[1] === "metadata.labels" ? metadata.labels : metadata.annotations;
    return map?.[subscript[2]!] ?? "";
  }
  switch (fieldPath) {
    case "metadata.annotations":
      return formatMap(metadata.annotations ?? {});
    case "metadata.labels":
      return formatMap(metadata.labels ?? {});
    case "metadata.name":
      return metadata.name ?? "";
    case "metadata.namespace":
      return metadata.namespace ?? "";
    case "metadata.uid":
      return metadata.uid ?? "";
  }
  let current: unknown = JSON.parse(JSON.stringify(pod)) as unknown;
  for (const segment of fieldPath.split(".")) {
    if (typeof current !== "object" || current === null || Array.isArray(current)) throw new Error(`fail to parse parameter by field ref: ${fieldPath} is not a field of the pod`);
    current = (current as Record<string, unknown>)[segment];
  }
  if (typeof current === "string") return current;
  return JSON.stringify(current ?? null);
}

/** The downward API's formatMap: `key="value"` lines, keys sorted. */
function formatMap(map: Readonly<Record<string, string>>): string {
  return Object.keys(map).sort().map((key) => `${key}=${JSON.stringify(map[key])}`).join("\n");
}
