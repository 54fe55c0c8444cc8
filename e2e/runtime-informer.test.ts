// The runtime's informer and controller loop against the real API server: what it caches
// is what a fresh list says, it survives the server ending watches, and a controller built
// on it converges.
import { describe, expect } from "vitest";
import { Controller } from "../src/controller/runtime/controller.ts";
import { Informer } from "../src/controller/runtime/informer.ts";
import { SharedInformers } from "../src/controller/runtime/shared-informers.ts";
import { createKubeClient } from "../src/kube/client.ts";
import { restListWatch } from "../src/kube/list-watch.ts";
import { objectKey, splitKey, type ConfigMap } from "../src/kube/objects.ts";
import { resources } from "../src/kube/resources.ts";
import { clients, eventually, test } from "./support/cluster.ts";
import { cached, matchesFreshList } from "./support/fresh-list.ts";

interface Seen {
  kind: "add" | "update" | "delete";
  name: string;
  data: Record<string, string> | undefined;
}

function record(informer: Informer<ConfigMap>): Seen[] {
  const seen: Seen[] = [];
  const entry = (kind: Seen["kind"], object: ConfigMap): Seen => ({ kind, name: object.metadata?.name ?? "", data: object.data });
  informer.addEventHandler({
    onAdd: (object) => seen.push(entry("add", object)),
    onUpdate: (_old, object) => seen.push(entry("update", object)),
    onDelete: (object) => seen.push(entry("delete", object)),
  });
  return seen;
}

describe("the informer on a real API server", () => {
  test("sees adds, updates and deletes, and its cache equals a fresh list byte for byte", async ({ namespace }) => {
    const { core } = clients();
    const kube = createKubeClient(clients().config);
    const informers = new SharedInformers({ transport: kube.rest });
    const informer = informers.forResource<ConfigMap>(resources.configMaps, { namespace });
    expect(informers.forResource<ConfigMap>(resources.configMaps, { namespace })).toBe(informer);
    const seen = record(informer);
    const stop = new AbortController();
    try {
      await core.createNamespacedConfigMap({ namespace, body: { metadata: { name: "before" }, data: { v: "0" } } });
      informers.start(stop.signal);
      expect(await informers.waitForSync(stop.signal)).toBe(true);
      expect(informer.cache.get(namespace, "before")?.data).toEqual({ v: "0" });

      await core.createNamespacedConfigMap({ namespace, body: { metadata: { name: "a", labels: { app: "x" } }, data: { v: "1" } } });
      await core.patchNamespacedConfigMap({ namespace, name: "a", body: [{ op: "replace", path: "/data/v", value: "2" }] });
      await core.createNamespacedConfigMap({ namespace, body: { metadata: { name: "b" }, data: { v: "1" } } });
      await core.deleteNamespacedConfigMap({ namespace, name: "before" });

      // Same objects, same JSON: list items and watch events arrive in one shape.
      await eventually(() => matchesFreshList(informer, namespace), 20_000, "the cache to match a fresh list");

      const mine = seen.filter((event) => event.name !== "kube-root-ca.crt");
      expect(mine).toEqual([
        { kind: "add", name: "before", data: { v: "0" } },
        { kind: "add", name: "a", data: { v: "1" } },
        { kind: "update", name: "a", data: { v: "2" } },
        { kind: "add", name: "b", data: { v: "1" } },
        { kind: "delete", name: "before", data: { v: "0" } },
      ]);
      const a = informer.cache.get(namespace, "a")!;
      expect(a).toMatchObject({ apiVersion: "v1", kind: "ConfigMap" });
      expect(typeof a.metadata?.creationTimestamp).toBe("string");
      expect(Object.isFrozen(a.metadata)).toBe(true);
      expect(informer.stats()).toMatchObject({ lists: 1, errors: 0, expired: 0 });
    } finally {
      stop.abort();
      await informers.stopped();
    }
  });

  test("re-watches from where it was when the server ends watches, without relisting or missing a change", async ({ namespace }) => {
    const { core } = clients();
    const kube = createKubeClient(clients().config);
    // The server ends every watch after one second; client-go would see this every 5-10 minutes.
    const informer = new Informer<ConfigMap>({ name: "configmaps", listWatch: restListWatch(kube.rest, resources.configMaps, { namespace }), watchTimeoutSeconds: () => 1 });
    const stop = new AbortController();
    const running = informer.run(stop.signal);
    try {
      await eventually(() => Promise.resolve(informer.hasSynced() ? true : undefined), 20_000, "sync");
      for (let step = 0; step < 12; step++) {
        await core.createNamespacedConfigMap({ namespace, body: { metadata: { name: `cm-${step}` }, data: { step: String(step) } } });
        if (step % 3 === 2) await core.deleteNamespacedConfigMap({ namespace, name: `cm-${step - 1}` });
        await new Promise((resolve) => setTimeout(resolve, 400));
      }
      await eventually(() => matchesFreshList(informer, namespace), 20_000, "the cache to match a fresh list");
      const stats = informer.stats();
      expect(stats.watches).toBeGreaterThanOrEqual(4);
      expect(stats.lists).toBe(1);
      expect(stats.expired).toBe(0);
      expect(cached(informer, namespace).size).toBe(8);
    } finally {
      stop.abort();
      await running;
    }
  });

  test("drives a controller: handlers enqueue keys, reconcile writes with server-side apply", async ({ namespace }) => {
    const { core } = clients();
    const kube = createKubeClient(clients().config);
    const informers = new SharedInformers({ transport: kube.rest });
    const configMaps = informers.forResource<ConfigMap>(resources.configMaps, { namespace });
    const reconciled: string[] = [];
    const controller = new Controller({
      name: "configmap-stamper",
      workers: 2,
      waitForSync: [configMaps],
      reconcile: async (key) => {
        reconciled.push(key);
        const { namespace: ns, name } = splitKey(key);
        const current = configMaps.cache.get(ns, name);
        if (current === undefined || name === "kube-root-ca.crt") return {};
        const wanted = `${Object.keys(current.data ?? {}).length}`;
        // Dirty check first: a write only when the stamp differs, so our own update ends the loop.
        if (current.metadata?.annotations?.["stamp"] === wanted) return {};
        await kube.core.configMaps.apply({ metadata: { namespace: ns ?? namespace, name, annotations: { stamp: wanted } } });
        return {};
      },
    });
    const enqueue = (object: ConfigMap) => controller.enqueue(objectKey(object));
    configMaps.addEventHandler({ onAdd: enqueue, onUpdate: (_old, object) => enqueue(object), onDelete: enqueue });
    const stop = new AbortController();
    informers.start(stop.signal);
    const running = controller.start(stop.signal);
    try {
      await core.createNamespacedConfigMap({ namespace, body: { metadata: { name: "one" }, data: { a: "1", b: "2" } } });
      await eventually(async () => {
        const read = await core.readNamespacedConfigMap({ namespace, name: "one" });
        return read.metadata?.annotations?.stamp === "2" ? read : undefined;
      }, 20_000, "the controller to stamp the ConfigMap");
      await core.patchNamespacedConfigMap({ namespace, name: "one", body: [{ op: "add", path: "/data/c", value: "3" }] });
      const stamped = await eventually(async () => {
        const read = await core.readNamespacedConfigMap({ namespace, name: "one" });
        return read.metadata?.annotations?.stamp === "3" ? read : undefined;
      }, 20_000, "the controller to restamp the ConfigMap");
      expect(stamped.metadata?.managedFields?.some((entry) => entry.manager === "pod-decorator" && entry.operation === "Apply")).toBe(true);
    } finally {
      stop.abort();
      await running;
      await informers.stopped();
    }
    expect(reconciled).toContain(`${namespace}/one`);
  });
});
