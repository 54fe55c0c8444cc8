// etcd compaction against the runtime's informer (issue 8): while the informer's watch is cut
// off, objects are added, changed and deleted and etcd is compacted past the informer's
// resourceVersion. Its next watch gets 410 Gone from etcd itself, it relists, and its cache
// ends up exactly what a fresh list says, with a synthetic delete for what vanished.
//
// The informer talks to a private API server without the watch cache: through the cache a
// watch is answered from the API server's own event window, which compaction does not touch;
// without it every watch is an etcd watch, as for resources whose cache is disabled, and a
// compacted revision is answered with 410.
import { afterAll, beforeAll, describe, expect, inject } from "vitest";
import { Informer } from "../src/controller/runtime/informer.ts";
import { createKubeClient } from "../src/kube/client.ts";
import { restListWatch } from "../src/kube/list-watch.ts";
import type { ConfigMap } from "../src/kube/objects.ts";
import { resources } from "../src/kube/resources.ts";
import { privateApiServer, type PrivateApiServer } from "./runtime-control-plane.ts";
import { clients, eventually, test } from "./support/cluster.ts";
import { compactEtcd, etcdRevision } from "./support/etcd.ts";
import { matchesFreshList } from "./support/fresh-list.ts";
import { WatchGate } from "./support/watch-gate.ts";

interface Seen {
  kind: "add" | "update" | "delete";
  name: string;
  data: Record<string, string> | undefined;
  resourceVersion: string | undefined;
}

describe("etcd compaction", () => {
  let api: PrivateApiServer;
  beforeAll(async () => {
    api = await privateApiServer({ extraFlags: ["--watch-cache=false"] });
  });
  afterAll(async () => {
    await api.kill();
  });

  test("answers a lagging watch with 410; the informer relists and its cache equals a fresh list", async ({ namespace }) => {
    const { core } = clients();
    const etcd = inject("etcdUrl");
    const gate = new WatchGate(restListWatch<ConfigMap>(createKubeClient(api.config).rest, resources.configMaps, { namespace }));
    const informer = new Informer<ConfigMap>({ name: "configmaps", listWatch: gate, backoff: { initialMs: 50, maxMs: 500 } });
    const seen: Seen[] = [];
    const entry = (kind: Seen["kind"], object: ConfigMap): Seen => ({ kind, name: object.metadata?.name ?? "", data: object.data, resourceVersion: object.metadata?.resourceVersion });
    informer.addEventHandler({
      onAdd: (object) => seen.push(entry("add", object)),
      onUpdate: (_old, object) => seen.push(entry("update", object)),
      onDelete: (object) => seen.push(entry("delete", object)),
    });
    const create = (name: string, v: string) => core.createNamespacedConfigMap({ namespace, body: { metadata: { name }, data: { v } } });
    const setV = (name: string, v: string) => core.patchNamespacedConfigMap({ namespace, name, body: [{ op: "replace", path: "/data/v", value: v }] });
    const mine = () => seen.filter((event) => event.name !== "kube-root-ca.crt").map(({ kind, name, data }) => `${kind} ${name} ${JSON.stringify(data)}`).sort();

    const stop = new AbortController();
    const running = informer.run(stop.signal);
    try {
      const doomed = await create("doomed", "1");
      for (const name of ["keep", "change"]) await create(name, "1");
      await eventually(() => matchesFreshList(informer, namespace), 20_000, "the informer to list the three ConfigMaps");

      // Control: a gap without compaction is bridged by the next watch, from where it was.
      await gate.close();
      seen.length = 0;
      await setV("change", "2");
      gate.open();
      await eventually(() => matchesFreshList(informer, namespace), 20_000, "the informer to catch up by watching");
      expect(mine()).toEqual(['update change {"v":"2"}']);
      expect(informer.stats()).toMatchObject({ lists: 1, expired: 0 });

      // The same gap, with etcd compacted past the informer's resourceVersion.
      await gate.close();
      seen.length = 0;
      const lagging = Number(informer.lastSyncResourceVersion());
      await setV("change", "3");
      await setV("change", "4");
      await core.deleteNamespacedConfigMap({ namespace, name: "doomed" });
      await create("born", "1");
      await create("ephemeral", "1");
      await core.deleteNamespacedConfigMap({ namespace, name: "ephemeral" });
      const revision = await etcdRevision(etcd);
      expect(revision).toBeGreaterThan(lagging);
      await compactEtcd(etcd, revision);
      gate.open();

      await eventually(async () => (informer.stats().expired >= 1 ? await matchesFreshList(informer, namespace) : undefined), 30_000, "a 410, a relist, and a cache equal to a fresh list");
      const stats = informer.stats();
      expect(stats).toMatchObject({ lists: 2, expired: 1 });
      // What happened in the gap, as the relist reports it: the latest state of each object,
      // nothing for one that came and went, and the vanished one as last seen.
      expect(mine()).toEqual(['add born {"v":"1"}', 'delete doomed {"v":"1"}', 'update change {"v":"4"}']);
      expect(seen.find((event) => event.kind === "delete")?.resourceVersion).toBe(doomed.metadata?.resourceVersion);
      expect(Number(informer.lastSyncResourceVersion())).toBeGreaterThanOrEqual(revision);
    } finally {
      stop.abort();
      gate.open();
      await running;
    }
  });
});
