// etcd's own API, through the JSON gateway on its client URL: the run's current revision, and
// compaction (what the API server does every five minutes, here on demand).

/** The store's current revision (what the API server reports as resourceVersion). */
export async function etcdRevision(etcdUrl: string): Promise<number> {
  // Any range request answers with the current revision in its header.
  const body = (await post(etcdUrl, "/v3/kv/range", { key: Buffer.from("/").toString("base64"), count_only: true })) as { header?: { revision?: string } };
  const revision = Number(body.header?.revision);
  if (!Number.isSafeInteger(revision) || revision <= 0) throw new Error(`etcd answered without a revision: ${JSON.stringify(body)}`);
  return revision;
}

/** Discards every revision older than `revision`; returns once the compaction is physical. */
export async function compactEtcd(etcdUrl: string, revision: number): Promise<void> {
  await post(etcdUrl, "/v3/kv/compaction", { revision: String(revision), physical: true });
}

async function post(etcdUrl: string, path: string, body: unknown): Promise<unknown> {
  const response = await fetch(`${etcdUrl}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body), signal: AbortSignal.timeout(30_000) });
  const text = await response.text();
  if (!response.ok) throw new Error(`etcd ${path}: ${response.status} ${text}`);
  return JSON.parse(text) as unknown;
}
