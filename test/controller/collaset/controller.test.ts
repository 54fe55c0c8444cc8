import { KubeConfig } from "@kubernetes/client-node";
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { collaSetController } from "../../../src/controller/collaset/controller.ts";
import type { CachedCollaSet } from "../../../src/controller/collaset/reconciler.ts";
import type { EventRecorder } from "../../../src/controller/runtime/event-recorder.ts";
import { FakeClock } from "../fake-clock.ts";
import { Informer } from "../../../src/controller/runtime/informer.ts";
import type { KubeClient } from "../../../src/kube/client.ts";
import type { KubeObject } from "../../../src/kube/objects.ts";

/** Informers that are never run: the controller is only wired, its queue exercised directly. */
function idleInformer<T extends KubeObject>(name: string): Informer<T> {
  const never = () => new Promise<never>(() => {});
  return new Informer<T>({ name, listWatch: { list: never, watch: never } });
}

describe("CollaSet controller wiring", () => {
  it("retries a failing CollaSet at least every 30 s however long it has been failing", async () => {
    const clock = new FakeClock();
    const config = new KubeConfig();
    config.loadFromOptions({ clusters: [{ name: "c", server: "https://127.0.0.1:1" }], users: [{ name: "u" }], contexts: [{ name: "x", cluster: "c", user: "u" }], currentContext: "x" });
    const controller = collaSetController({
      informers: { collaSets: idleInformer("collasets"), revisions: idleInformer("revisions"), pods: idleInformer("pods"), decorations: idleInformer("decorations"), decorationRevisions: idleInformer("decoration-revisions"), claims: idleInformer("claims"), resourceContexts: idleInformer("resource-contexts") },
      decorationSource: { decorations: () => [], revisionData: () => undefined },
      client: { config, kusion: { collaSets: {}, resourceContexts: {} }, core: { pods: {}, persistentVolumeClaims: {} }, apps: { controllerRevisions: {} } } as unknown as KubeClient<KubeObject, CachedCollaSet>,
      events: {} as EventRecorder,
      clock,
      logger: pino({ level: "silent" }),
    });
    // Twenty-five failures in a row: client-go's default would wait 5 ms·2^24 (capped at 1000 s) by now.
    for (let failure = 1; failure <= 25; failure++) {
      controller.queue.addRateLimited("ns/web");
      await clock.advance(30_000);
      expect(controller.queue.len(), `queued within 30 s after failure ${failure}`).toBe(1);
      controller.queue.done((await controller.queue.get())!);
    }
    expect(controller.queue.numRequeues("ns/web")).toBe(25);
  });
});
