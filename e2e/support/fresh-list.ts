// Whether an informer's cache holds exactly what the API server lists: the same objects, byte
// for byte (managed fields included), compared as canonical JSON.
import type { Informer } from "../../src/controller/runtime/informer.ts";
import type { ConfigMap } from "../../src/kube/objects.ts";
import { kubectl } from "./cluster.ts";

// Published into every namespace by a controller in some clusters; not part of any test.
const ROOT_CA = "kube-root-ca.crt";

/** True when the informer's ConfigMaps in namespace equal a fresh list, else undefined (for `eventually`). */
export async function matchesFreshList(informer: Informer<ConfigMap>, namespace: string): Promise<true | undefined> {
  const expected = await freshList(namespace);
  return canonical(byName(cached(informer, namespace))) === canonical(byName(expected)) ? true : undefined;
}

/** The namespace's ConfigMaps as kubectl reads them, by name. */
export async function freshList(namespace: string): Promise<Map<string, unknown>> {
  const result = await kubectl(["get", "configmaps", "-n", namespace, "-o", "json", "--show-managed-fields"]);
  if (result.code !== 0) throw new Error(result.stderr);
  const items = (JSON.parse(result.stdout) as { items: ConfigMap[] }).items.filter((item) => item.metadata?.name !== ROOT_CA);
  return new Map(items.map((item) => [item.metadata?.name ?? "", item]));
}

/** The informer's ConfigMaps in namespace, by name. */
export function cached(informer: Informer<ConfigMap>, namespace: string): Map<string, unknown> {
  return new Map(informer.cache.list(namespace).filter((item) => item.metadata?.name !== ROOT_CA).map((item) => [item.metadata?.name ?? "", item]));
}

function byName(objects: Map<string, unknown>): [string, unknown][] {
  return [...objects].sort(([a], [b]) => a.localeCompare(b));
}

/** JSON with object keys sorted, so that equal objects compare equal whatever their key order. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, field: unknown) =>
    field !== null && typeof field === "object" && !Array.isArray(field) ? Object.fromEntries(Object.entries(field).sort(([a], [b]) => a.localeCompare(b))) : field,
  );
}
