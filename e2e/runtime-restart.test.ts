// The informer against an API server that crashes and comes back: the watch fails, the
// informer retries with backoff, and the restarted server — whose watch cache starts at
// the present — answers the informer's old resourceVersion with 410, so it relists and
// reports what changed while it was cut off.
import { afterAll, beforeAll, describe, expect } from "vitest";
import { Informer } from "../src/controller/runtime/informer.ts";
import { createKubeClient } from "../src/kube/client.ts";
import { isGone } from "../src/kube/errors.ts";
import { restListWatch, type WatchEvent } from "../src/kube/list-watch.ts";
import type { ConfigMap } from "../src/kube/objects.ts";
import { resources } from "../src/kube/resources.ts";
import { privateApiServer, type PrivateApiServer } from "./runtime-control-plane.ts";
import { clients, eventually, kubectl, test } from "./support/cluster.ts";

describe("an API server restart", () => {
  let api: PrivateApiServer;
  beforeAll(async () => {
    api = await privateApiServer();
  });
  afterAll(async () => {
    await api.kill();
  });

  test("is ridden out by the informer, which relists what it missed", async ({ namespace }) => {
    const { core } = clients();
    const kube = createKubeClient(api.config);
    const informer = new Informer<ConfigMap>({
      name: "configmaps",
      listWatch: restListWatch(kube.rest, resources.configMaps, { namespace }),
      backoff: { initialMs: 200, maxMs: 2_000 },
    });
    const seen: string[] = [];
    informer.addEventHandler({
      onAdd: (object) => seen.push(`add ${object.metadata?.name}`),
      onUpdate: (_old, object) => seen.push(`update ${object.metadata?.name} ${JSON.stringify(object.data)}`),
      onDelete: (object) => seen.push(`delete ${object.metadata?.name}`),
    });
    const stop = new AbortController();
    const running = informer.run(stop.signal);
    try {
      for (const name of ["keep", "change", "doomed"]) await core.createNamespacedConfigMap({ namespace, body: { metadata: { name }, data: { v: "1" } } });
      await eventually(() => Promise.resolve(informer.cache.list(namespace).length === 3 ? true : undefined), 20_000, "the informer to see three ConfigMaps");
      seen.length = 0;

      await api.kill();
      // Changes while the informer's server is down, made through the shared one.
      await core.patchNamespacedConfigMap({ namespace, name: "change", body: [{ op: "replace", path: "/data/v", value: "2" }] });
      await core.deleteNamespacedConfigMap({ namespace, name: "doomed" });
      await core.createNamespacedConfigMap({ namespace, body: { metadata: { name: "born" }, data: { v: "1" } } });
      await eventually(() => Promise.resolve(informer.stats().errors >= 2 ? true : undefined), 20_000, "the informer to notice the server is gone");
      expect(informer.cache.get(namespace, "doomed")).toBeDefined();

      await api.start();
      await eventually(() => Promise.resolve(informer.cache.get(namespace, "born") !== undefined && informer.cache.get(namespace, "doomed") === undefined ? true : undefined), 60_000, "the informer to catch up");
      expect(seen.sort()).toEqual(["add born", "delete doomed", 'update change {"v":"2"}']);
      const listed = await kubectl(["get", "configmaps", "-n", namespace, "-o", "jsonpath={.items[*].metadata.resourceVersion}"]);
      expect(informer.cache.list(namespace).map((object) => object.metadata?.resourceVersion).sort()).toEqual(listed.stdout.split(" ").sort());
      const stats = informer.stats();
      // The restarted server's watch cache begins after our resourceVersion: a 410, then a relist.
      expect(stats.expired).toBeGreaterThanOrEqual(1);
      expect(stats.lists).toBeGreaterThanOrEqual(2);
      expect(informer.hasSynced()).toBe(true);
    } finally {
      stop.abort();
      await running;
    }
  });

  test("makes the server answer an older resourceVersion with 410 Gone", async ({ namespace }) => {
    const { core } = clients();
    const created = await core.createNamespacedConfigMap({ namespace, body: { metadata: { name: "marker" } } });
    const old = created.metadata?.resourceVersion ?? "";
    await api.kill();
    await core.createNamespacedConfigMap({ namespace, body: { metadata: { name: "after" } } });
    await api.start();
    const listWatch = restListWatch<ConfigMap>(createKubeClient(api.config).rest, resources.configMaps, { namespace });
    const answer = await eventually(async () => {
      const stop = new AbortController();
      const events: WatchEvent<ConfigMap>[] = [];
      try {
        await listWatch.watch({ resourceVersion: old, timeoutSeconds: 5, signal: stop.signal }, (event) => {
          events.push(event);
          stop.abort();
        });
      } catch (error) {
        // Anything but 410 (429 while the new server's cache initialises) is retried.
        if (!stop.signal.aborted) {
          if (isGone(error)) return "410 response";
          throw error;
        }
      }
      const first = events[0];
      if (first === undefined) return undefined;
      return first.type === "ERROR" && isGone({ code: first.object.code, body: first.object }) ? "410 event" : `unexpected ${first.type} event`;
    }, 60_000, "an answer to the old resourceVersion");
    expect(["410 response", "410 event"]).toContain(answer);
  });
});
