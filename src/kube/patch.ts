// Patch content types chosen per call, and the field manager every write carries. The
// generated clients default to JSON Patch; any other type must be set as a header per call.
import { PatchStrategy, setHeaderOptions } from "@kubernetes/client-node";

/** The field manager of every write, so managedFields show what this controller owns. */
export const fieldManager = "pod-decorator";

export type PatchCallOptions = ReturnType<typeof setHeaderOptions>;

export type JsonPatchOperation =
  | { op: "add" | "replace" | "test"; path: string; value: unknown }
  | { op: "remove"; path: string }
  | { op: "move" | "copy"; from: string; path: string };

export { pointerSegment } from "../api/json-pointer.ts";

export type PatchKind = "apply" | "merge" | "json";

const contentTypes: Record<PatchKind, string> = {
  apply: PatchStrategy.ServerSideApply,
  merge: PatchStrategy.MergePatch,
  json: PatchStrategy.JsonPatch,
};

export function patchCallOptions(kind: PatchKind): PatchCallOptions {
  return setHeaderOptions("Content-Type", contentTypes[kind]);
}

/** Query parameters of a patch: server-side apply takes ownership of conflicting fields (force). */
export function patchQuery(kind: PatchKind): { fieldManager: string; force?: boolean } {
  return kind === "apply" ? { fieldManager, force: true } : { fieldManager };
}
