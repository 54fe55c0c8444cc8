// The thin client layer against the real API server: typed reads come back in exactly the
// wire shape, server-side apply and patches carry the pod-decorator field manager, API
// errors are recognised, conflicts are retried from a fresh read, custom objects write
// status through the status subresource, and the event recorder aggregates.
import { describe, expect } from "vitest";
import { EventRecorder } from "../src/controller/runtime/event-recorder.ts";
import { createKubeClient } from "../src/kube/client.ts";
import { isAlreadyExists, isConflict, isNotFound } from "../src/kube/errors.ts";
import type { Event, KubeObject, Pod } from "../src/kube/objects.ts";
import { updateFresh } from "../src/kube/retry-on-conflict.ts";
import { clients, eventually, kubectl, test } from "./support/cluster.ts";

const kube = () => createKubeClient(clients().config);

function pod(namespace: string, name: string, labels: Record<string, string>): Pod {
  return { metadata: { namespace, name, labels }, spec: { containers: [{ name: "main", image: "registry.k8s.io/pause:3.10" }] } };
}

function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, field: unknown) =>
    field !== null && typeof field === "object" && !Array.isArray(field) ? Object.fromEntries(Object.entries(field).sort(([a], [b]) => a.localeCompare(b))) : field,
  );
}

interface PodDecoration extends KubeObject {
  spec?: { selector?: { matchLabels?: Record<string, string> }; historyLimit?: number };
  status?: { observedGeneration?: number; matchedPods?: number };
}

describe("the kube client layer", () => {
  test("reads typed objects in exactly the shape the server sends", async ({ namespace }) => {
    const client = kube();
    await client.core.pods.create(pod(namespace, "p", { app: "web" }));
    const typed = await client.core.pods.get(namespace, "p");
    const raw = await client.rest.getJson(`/api/v1/namespaces/${namespace}/pods/p`);
    expect(canonical(typed)).toBe(canonical(raw));
    const [listed] = await client.core.pods.list(namespace, { labelSelector: "app=web" });
    expect(canonical(listed)).toBe(canonical(raw));
    expect(typeof typed.metadata?.creationTimestamp).toBe("string");
    expect(await client.core.pods.list(namespace, { labelSelector: "app=other" })).toEqual([]);
    expect((await client.core.namespaces.get(namespace)).metadata?.labels?.["kubernetes.io/metadata.name"]).toBe(namespace);
  });

  test("applies server-side as pod-decorator and patches with merge and JSON patch", async ({ namespace }) => {
    const { pods } = kube().core;
    const created = await pods.apply(pod(namespace, "p", { app: "web", tier: "a" }));
    expect(created).toMatchObject({ apiVersion: "v1", kind: "Pod", metadata: { labels: { app: "web", tier: "a" } } });
    // Apply again without "tier": the field we owned and no longer apply is removed.
    const reapplied = await pods.apply(pod(namespace, "p", { app: "web" }));
    expect(reapplied.metadata?.labels).toEqual({ app: "web" });
    expect(reapplied.metadata?.managedFields?.find((entry) => entry.manager === "pod-decorator")?.operation).toBe("Apply");

    const merged = await pods.mergePatch(namespace, "p", { metadata: { annotations: { note: "merged" } } });
    expect(merged.metadata?.annotations).toEqual({ note: "merged" });
    const patched = await pods.jsonPatch(namespace, "p", [
      { op: "test", path: "/metadata/annotations/note", value: "merged" },
      { op: "add", path: "/metadata/labels/patched", value: "yes" },
    ]);
    expect(patched.metadata?.labels).toEqual({ app: "web", patched: "yes" });
    await expect(pods.jsonPatch(namespace, "p", [{ op: "test", path: "/metadata/annotations/note", value: "other" }])).rejects.toMatchObject({ code: 422 });
    const updates = patched.metadata?.managedFields?.filter((entry) => entry.manager === "pod-decorator" && entry.operation === "Update") ?? [];
    expect(updates.length).toBeGreaterThan(0);
  });

  test("recognises NotFound, AlreadyExists and Conflict, and retries a conflict from a fresh read", async ({ namespace }) => {
    const { pods } = kube().core;
    expect(isNotFound(await pods.get(namespace, "missing").catch((error: unknown) => error))).toBe(true);
    await pods.create(pod(namespace, "p", { n: "0" }));
    expect(isAlreadyExists(await pods.create(pod(namespace, "p", { n: "0" })).catch((error: unknown) => error))).toBe(true);

    const stale = await pods.get(namespace, "p");
    await pods.mergePatch(namespace, "p", { metadata: { labels: { n: "1" } } });
    const conflict = await pods.replace({ ...stale, metadata: { ...stale.metadata, labels: { n: "stale" } } }).catch((error: unknown) => error);
    expect(isConflict(conflict)).toBe(true);

    // Another writer bumps the label between our first read and our write; we converge anyway.
    let reads = 0;
    const result = await updateFresh(
      async () => {
        const fresh = await pods.get(namespace, "p");
        if (reads++ === 0) await pods.mergePatch(namespace, "p", { metadata: { labels: { n: "2" } } });
        return fresh;
      },
      (fresh) => pods.replace({ ...fresh, metadata: { ...fresh.metadata, labels: { n: String(Number(fresh.metadata?.labels?.n) + 10) } } }),
    );
    expect(reads).toBe(2);
    expect(result?.metadata?.labels).toEqual({ n: "12" });
  });

  test("writes PodDecoration status only through the status subresource", async ({ namespace }) => {
    const { podDecorations } = createKubeClient<PodDecoration>(clients().config).kusion;
    const decoration: PodDecoration = { metadata: { namespace, name: "logging" }, spec: { selector: { matchLabels: { app: "demo" } }, historyLimit: 5 } };
    // A webhook from another test may briefly be registered and unreachable: retry the first write.
    const created = await eventually(() => podDecorations.apply(decoration), 30_000, "the PodDecoration to be accepted");
    expect(created).toMatchObject({ apiVersion: "apps.kusionstack.io/v1alpha1", kind: "PodDecoration", metadata: { generation: 1 } });

    // Status sent with the main resource is dropped by the server...
    const ignored = await podDecorations.mergePatch(namespace, "logging", { status: { matchedPods: 7 } });
    expect(ignored.status).toBeUndefined();
    // ...and lands through the subresource, by apply and by merge patch.
    const applied = await podDecorations.applyStatus({ metadata: { namespace, name: "logging" }, status: { observedGeneration: 1, matchedPods: 2 } });
    expect(applied.status).toEqual({ observedGeneration: 1, matchedPods: 2 });
    const merged = await podDecorations.mergePatchStatus(namespace, "logging", { status: { matchedPods: 3 } });
    expect(merged.status).toEqual({ observedGeneration: 1, matchedPods: 3 });
    expect(merged.metadata?.generation).toBe(1);
    const listed = await podDecorations.list(namespace);
    expect(listed.map((item) => [item.kind, item.metadata?.name, item.status?.matchedPods])).toEqual([["PodDecoration", "logging", 3]]);
    await podDecorations.delete(namespace, "logging");
    await eventually(async () => ((await podDecorations.list(namespace)).length === 0 ? true : undefined), 30_000, "the PodDecoration to go");
  });

  test("keeps ControllerRevisions with their data and deletes them with a precondition", async ({ namespace }) => {
    const { controllerRevisions } = kube().apps;
    const created = await controllerRevisions.create({
      metadata: { namespace, name: "logging-7f9c", labels: { "controller.kubernetes.io/hash": "7f9c" } },
      revision: 2,
      data: { template: { containers: [{ name: "log", image: "fluent-bit:3" }] } },
    });
    expect(created).toMatchObject({ kind: "ControllerRevision", revision: 2, data: { template: { containers: [{ name: "log" }] } } });
    const [listed] = await controllerRevisions.list(namespace, { labelSelector: "controller.kubernetes.io/hash=7f9c" });
    expect(listed?.metadata?.uid).toBe(created.metadata?.uid);
    const wrongUid = await controllerRevisions.delete(namespace, "logging-7f9c", { preconditions: { uid: "not-it" } }).catch((error: unknown) => error);
    expect(isConflict(wrongUid)).toBe(true);
    await controllerRevisions.delete(namespace, "logging-7f9c", { preconditions: { uid: created.metadata?.uid ?? "" } });
    expect(isNotFound(await controllerRevisions.get(namespace, "logging-7f9c").catch((error: unknown) => error))).toBe(true);
  });

  test("folds a hot loop of the same event into one Event with its count", async ({ namespace }) => {
    const client = kube();
    const subject = await client.core.pods.create(pod(namespace, "subject", {}));
    const recorder = new EventRecorder({ sink: client.core.events, component: "pod-decorator", instance: "e2e", minIntervalMs: 200 });
    const started = Date.now();
    let recorded = 0;
    while (Date.now() - started < 1_500) {
      for (let burst = 0; burst < 50; burst++, recorded++) recorder.record(subject, "Warning", "RenderFailed", "the same failure, again");
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    recorder.record(subject, "Normal", "Rendered", "a different event");
    recorded++;
    await recorder.flush();
    const result = await kubectl(["get", "events", "-n", namespace, "-o", "json"]);
    const events = (JSON.parse(result.stdout) as { items: Event[] }).items;
    const failures = events.filter((event) => event.reason === "RenderFailed");
    expect(failures).toHaveLength(1);
    expect(failures[0]).toMatchObject({ type: "Warning", count: recorded - 1, involvedObject: { kind: "Pod", name: "subject", uid: subject.metadata?.uid } });
    expect(events.filter((event) => event.reason === "Rendered")).toHaveLength(1);
    const describe = await kubectl(["describe", "pod", "subject", "-n", namespace]);
    expect(describe.stdout).toMatch(/Warning\s+RenderFailed\s[^\n]*the same failure, again/);
  });
});
