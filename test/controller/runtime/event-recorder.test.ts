import { ApiException } from "@kubernetes/client-node";
import { describe, expect, it } from "vitest";
import { EventRecorder, type EventSink } from "../../../src/controller/runtime/event-recorder.ts";
import { FakeClock, settle } from "../fake-clock.ts";
import type { Event, KubeObject } from "../../../src/kube/objects.ts";

/** Records what the recorder would write; events "exist" until expire() drops them. */
class RecordingSink implements EventSink {
  readonly created: Event[] = [];
  readonly patches: { name: string; patch: Record<string, unknown> }[] = [];
  readonly existing = new Map<string, Event>();

  create(event: Event): Promise<Event> {
    this.created.push(event);
    this.existing.set(event.metadata?.name ?? "", event);
    return Promise.resolve(event);
  }

  mergePatch(_namespace: string, name: string, patch: object): Promise<Event> {
    const event = this.existing.get(name);
    if (event === undefined) return Promise.reject(new ApiException(404, "Not Found", JSON.stringify({ reason: "NotFound", code: 404 }), {}));
    this.patches.push({ name, patch: patch as Record<string, unknown> });
    return Promise.resolve({ ...event, ...patch });
  }

  expire(): void {
    this.existing.clear();
  }
}

const decoration: KubeObject = { apiVersion: "apps.kusionstack.io/v1alpha1", kind: "PodDecoration", metadata: { namespace: "team", name: "sidecar", uid: "u-1", resourceVersion: "9" } };

function setup(options: { windowMs?: number } = {}) {
  const clock = new FakeClock();
  const sink = new RecordingSink();
  const recorder = new EventRecorder({ sink, component: "pod-decorator", instance: "pod-decorator-0", clock, ...options });
  return { clock, sink, recorder };
}

describe("EventRecorder", () => {
  it("creates a core/v1 Event about the involved object", async () => {
    const { sink, recorder, clock } = setup();
    recorder.record(decoration, "Warning", "TemplateInvalid", "spec.template.containers[0].image: required");
    await recorder.flush();
    expect(sink.created).toHaveLength(1);
    const event = sink.created[0]!;
    expect(event).toMatchObject({
      metadata: { namespace: "team" },
      involvedObject: { apiVersion: "apps.kusionstack.io/v1alpha1", kind: "PodDecoration", namespace: "team", name: "sidecar", uid: "u-1", resourceVersion: "9" },
      type: "Warning",
      reason: "TemplateInvalid",
      message: "spec.template.containers[0].image: required",
      count: 1,
      firstTimestamp: new Date(clock.now()).toISOString().replace(".000", ""),
      source: { component: "pod-decorator", host: "pod-decorator-0" },
      reportingComponent: "pod-decorator",
      reportingInstance: "pod-decorator-0",
    });
    expect(event.metadata?.name).toMatch(/^sidecar\.[0-9a-f]{16}$/);
  });

  it("folds a hot loop of the same event into one Event with a count, written a few times", async () => {
    const { sink, recorder, clock } = setup();
    for (let repeat = 0; repeat < 1000; repeat++) {
      recorder.record(decoration, "Warning", "RenderFailed", "same message");
      if (repeat % 100 === 99) await clock.advance(250);
    }
    await recorder.flush();
    expect(sink.created).toHaveLength(1);
    // At most one write a second over the 2.5s the loop ran, plus the final flush.
    expect(sink.patches.length).toBeLessThanOrEqual(4);
    expect(sink.patches.at(-1)?.patch.count).toBe(1000);
    expect(sink.patches.every((write) => write.name === sink.created[0]!.metadata?.name)).toBe(true);
  });

  it("keeps different reasons, messages and objects apart", async () => {
    const { sink, recorder } = setup();
    recorder.record(decoration, "Normal", "Synced", "a");
    recorder.record(decoration, "Normal", "Synced", "b");
    recorder.record(decoration, "Warning", "Synced", "a");
    recorder.record({ ...decoration, metadata: { ...decoration.metadata, name: "other", uid: "u-2" } }, "Normal", "Synced", "a");
    await recorder.flush();
    expect(sink.created).toHaveLength(4);
    expect(sink.patches).toHaveLength(0);
  });

  it("starts a new Event once the window has passed", async () => {
    const { sink, recorder, clock } = setup({ windowMs: 60_000 });
    recorder.record(decoration, "Normal", "Synced", "a");
    await recorder.flush();
    await clock.advance(30_000);
    recorder.record(decoration, "Normal", "Synced", "a");
    await recorder.flush();
    expect(sink.created).toHaveLength(1);
    expect(sink.patches.at(-1)?.patch.count).toBe(2);
    await clock.advance(60_001);
    recorder.record(decoration, "Normal", "Synced", "a");
    await recorder.flush();
    expect(sink.created).toHaveLength(2);
    expect(sink.created[1]?.count).toBe(1);
  });

  it("creates the Event again when the one it was counting has expired", async () => {
    const { sink, recorder, clock } = setup();
    recorder.record(decoration, "Normal", "Synced", "a");
    await recorder.flush();
    sink.expire();
    await clock.advance(5_000);
    recorder.record(decoration, "Normal", "Synced", "a");
    await recorder.flush();
    expect(sink.created).toHaveLength(2);
    expect(sink.created[1]?.count).toBe(2);
  });

  it("combines similar events from the tenth distinct message on, as client-go does; the combined Event tells the latest", async () => {
    const { sink, recorder, clock } = setup();
    for (let pod = 0; pod < 100; pod++) {
      recorder.record(decoration, "Normal", "UpdatedInPlace", `updated pod web-${pod} in place`);
      await clock.advance(100);
    }
    // A repeat of a message seen before the combining began still counts on its own Event.
    recorder.record(decoration, "Normal", "UpdatedInPlace", "updated pod web-3 in place");
    // Another reason, or another object, is not similar.
    recorder.record(decoration, "Normal", "OperationStarted", "pod web-0 leaves traffic");
    await recorder.flush();

    const updates = sink.created.filter((event) => event.reason === "UpdatedInPlace");
    expect(updates.map((event) => event.message)).toEqual([
      ...Array.from({ length: 9 }, (_, pod) => `updated pod web-${pod} in place`),
      "(combined from similar events): updated pod web-9 in place",
    ]);
    const combined = updates.at(-1)!;
    const last = sink.patches.filter((write) => write.name === combined.metadata?.name).at(-1)!.patch;
    expect(last).toMatchObject({ count: 91, message: "(combined from similar events): updated pod web-99 in place" });
    expect(sink.patches.find((write) => write.name === updates[3]!.metadata?.name)?.patch).toMatchObject({ count: 2, message: "updated pod web-3 in place" });
    expect(sink.created.filter((event) => event.reason === "OperationStarted")).toHaveLength(1);

    // After a quiet window, messages count from nothing again.
    await clock.advance(600_001);
    recorder.record(decoration, "Normal", "UpdatedInPlace", "updated pod web-100 in place");
    await recorder.flush();
    expect(sink.created.at(-1)?.message).toBe("updated pod web-100 in place");
  });

  it("never throws to the caller when the API server refuses", async () => {
    const clock = new FakeClock();
    const refusing: EventSink = { create: () => Promise.reject(new Error("forbidden")), mergePatch: () => Promise.reject(new Error("forbidden")) };
    const recorder = new EventRecorder({ sink: refusing, component: "pod-decorator", clock });
    expect(() => recorder.record(decoration, "Normal", "Synced", "a")).not.toThrow();
    await settle();
    await expect(recorder.flush()).resolves.toBeUndefined();
  });
});
