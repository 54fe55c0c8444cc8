// Step 1 of rendering a decoration: labels and annotations, per patch policy.
import type { ObjectMeta } from "../../api/kubernetes.ts";
import type { MetadataPatch } from "../../api/poddecoration.ts";
import { applyMergePatch, isJsonObject } from "../merge-patch.ts";
import type { Warn } from "./warn.ts";

/** Renders the template's metadata patches into `metadata` (a copy the renderer owns). */
export function renderMetadata(metadata: ObjectMeta, patches: readonly MetadataPatch[], warn: Warn): void {
  patches.forEach((patch, index) => {
    const path = `template.metadata[${index}]`;
    const policy = patch.patchPolicy ?? "Retain";
    const labels = Object.entries(patch.labels ?? {});
    if (labels.length > 0) {
      if (policy === "MergePatchJson") warn(`${path}.labels`, "patchPolicy MergePatchJson applies to annotations only; labels skipped");
      else metadata.labels = setEntries(metadata.labels, labels, policy === "Overwrite");
    }
    const annotations = Object.entries(patch.annotations ?? {});
    if (annotations.length === 0) return;
    if (policy !== "MergePatchJson") {
      metadata.annotations = setEntries(metadata.annotations, annotations, policy === "Overwrite");
      return;
    }
    const target = (metadata.annotations ??= {});
    for (const [key, value] of annotations) {
      const current = target[key];
      if (current === undefined) {
        target[key] = value;
        continue;
      }
      const before = parseJson(current);
      const patchValue = parseJson(value);
      if (!isJsonObject(before) || !isJsonObject(patchValue)) {
        warn(`${path}.annotations[${key}]`, `${isJsonObject(patchValue) ? "the pod's value" : "the decoration's value"} is not a JSON object; the pod's value is kept`);
        continue;
      }
      target[key] = JSON.stringify(applyMergePatch(before, patchValue));
    }
  });
}

function setEntries(map: Record<string, string> | undefined, entries: readonly [string, string][], overwrite: boolean): Record<string, string> {
  const result = map ?? {};
  for (const [key, value] of entries) if (overwrite || !Object.hasOwn(result, key)) result[key] = value;
  return result;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
