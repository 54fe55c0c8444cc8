// The one status write both controllers make (DESIGN §7): through the status subresource, as a
// JSON Patch with our field manager (never a PUT of the whole object), guarded by a `test` of
// the resourceVersion the cache showed, so a write computed from a stale object loses instead
// of overwriting a newer status. An unchanged status is not written at all.
import { isLostRace } from "../kube/errors.ts";
import type { KubeObject } from "../kube/objects.ts";
import type { StatusClient } from "../kube/resource-client.ts";
import { sameJson } from "../api/json.ts";

export type StatusWrite =
  | "unchanged"
  | "written"
  /** The object changed since the cache showed it; its update event brings a fresh read. */
  | "stale";

export async function writeStatus<T extends KubeObject & { status?: object }>(
  client: Pick<StatusClient<T>, "jsonPatchStatus">,
  object: T,
  status: NonNullable<T["status"]>,
): Promise<StatusWrite> {
  if (sameJson(status, object.status ?? {})) return "unchanged";
  const { namespace = "", name = "", resourceVersion } = object.metadata ?? {};
  try {
    await client.jsonPatchStatus(namespace, name, [
      { op: "test", path: "/metadata/resourceVersion", value: resourceVersion },
      { op: "add", path: "/status", value: status },
    ]);
  } catch (error) {
    if (isLostRace(error)) return "stale";
    throw error;
  }
  return "written";
}
