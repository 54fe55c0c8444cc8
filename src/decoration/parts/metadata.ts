// Step 1 of rendering a decoration: labels and annotations, per patch policy.
import type { ObjectMeta } from "../../api/kubernetes.ts";
import type { MetadataPatch } from "../../api/poddecoration.ts";
import { applyMergePatch } from "../merge-patch.ts";
import type { Warn } from "./warn.ts";

/**
 * Which of the metadata's maps a render has copied already and may change: copying each map for
 * every decoration made a pod with many decorations cost their count times its labels.
 */
export interface OwnedMaps {
  labels: boolean;
  annotations: boolean;
}

/**
 * Renders the template's metadata patches into `metadata` (the renderer's own). Its maps are
 * replaced by copies, never changed — but for those `owned` says the render copied already.
 */
export function renderMetadata(metadata: ObjectMeta, patches: readonly MetadataPatch[], warn: Warn, owned: OwnedMaps = { labels: false, annotations: false }): void {
  const writable = (field: "labels" | "annotations"): Record<string, string> => {
    if (!owned[field]) {
      metadata[field] = { ...metadata[field] };
      owned[field] = true;
    }
    return (metadata[field] ??= {});
  };
  patches.forEach((patch, index) => {
    const path = `template.metadata[${index}]`;
    const policy = patch.patchPolicy ?? "Retain";
    const labels = Object.entries(patch.labels ?? {});
    if (labels.length > 0) {
      if (policy === "MergePatchJson") warn(`${path}.labels`, "patchPolicy MergePatchJson applies to annotations only; labels skipped");
      else setEntries(writable("labels"), labels, policy === "Overwrite");
    }
    const annotations = Object.entries(patch.annotations ?? {});
    if (annotations.length === 0) return;
    if (policy !== "MergePatchJson") {
      setEntries(writable("annotations"), annotations, policy === "Overwrite");
      return;
    }
    const target = writable("annotations");
    for (const [key, value] of annotations) {
      const current = target[key];
      // Absent or empty: nothing to merge into, the value is written as given (as KusionStack does).
      if (current === undefined || current === "") {
        target[key] = value;
        continue;
      }
      const patchValue = parseJson(value);
      if (patchValue === NOT_JSON) {
        // Only a spec stored while no validating webhook ran can get here.
        warn(`${path}.annotations[${key}]`, "the decoration's value is not JSON; the pod's value is kept");
        continue;
      }
      const before = parseJson(current);
      // RFC 7386: a target that is not an object is replaced; one that is not JSON at all, too, said aloud.
      if (before === NOT_JSON) warn(`${path}.annotations[${key}]`, "the pod's value is not JSON; it is replaced");
      target[key] = JSON.stringify(applyMergePatch(before === NOT_JSON ? undefined : before, patchValue));
    }
  });
}

function setEntries(map: Record<string, string>, entries: readonly [string, string][], overwrite: boolean): void {
  for (const [key, value] of entries) if (overwrite || !Object.hasOwn(map, key)) map[key] = value;
}

const NOT_JSON = Symbol("not JSON");

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return NOT_JSON;
  }
}
