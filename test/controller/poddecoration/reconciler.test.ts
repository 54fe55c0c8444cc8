// The PodDecoration reconciler's decisions over frozen caches and a scripted stand-in for its
// writes (every write that succeeds shows in the caches at once, as a watch would): the
// finalizer first, one revision per spec, a collision escaped, TemplateValid from one dry run
// per revision, status written only when it changes and never over a newer object, and the
// finalizer held while a CollaSet pod carries the decoration. The e2e suite checks the same
// against the real API server.
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import type { PodDecoration } from "../../../src/api/poddecoration.ts";
import { POD_DECORATION_FINALIZER, PodDecorationReconciler, storedTemplates, type CachedDecoration } from "../../../src/controller/poddecoration/reconciler.ts";
import { clusterKey } from "../../../src/decoration/decoration-kind.ts";
import { formatRevisionsAnnotation, REVISIONS_ANNOTATION } from "../../../src/decoration/recording.ts";
import type { DryRunCreate, DryRunVerdict } from "../../../src/kube/server-dry-run.ts";
import type { ControllerRevision, KubeObject, Pod } from "../../../src/kube/objects.ts";
import { buildControllerRevision } from "../../../src/revision/controller-revision.ts";
import { hashRevisionData } from "../../../src/revision/hash.ts";
import { revisionName } from "../../../src/revision/name.ts";
import { revisionData } from "../../../src/revision/revision-data.ts";
import { FakeClock } from "../fake-clock.ts";
import { FrozenCache } from "../frozen-cache.ts";
import { applyOperations, patchNotApplied } from "../collaset/reconciler-harness.ts";

const UID = "uid-certs";

function decoration(image = "envoy:1"): PodDecoration {
  return {
    apiVersion: "apps.kusionstack.io/v1alpha1",
    kind: "PodDecoration",
    metadata: { name: "certs", namespace: "shop" },
    spec: { selector: { matchLabels: { app: "web" } }, template: { containers: [{ name: "proxy", image }] } },
  };
}

class Harness {
  readonly clock = new FakeClock();
  readonly decorations = new FrozenCache<CachedDecoration>();
  readonly revisions = new FrozenCache<ControllerRevision>();
  readonly pods = new FrozenCache<Pod>();
  readonly collaSets = new FrozenCache<KubeObject>();
  readonly writes: string[] = [];
  readonly events: { type: string; reason: string }[] = [];
  readonly dryRuns: Parameters<DryRunCreate>[0][] = [];
  verdict: DryRunVerdict = { valid: true };
  /** The next status write finds the object changed (its resourceVersion test fails). */
  staleStatus = false;
  readonly reconciler: PodDecorationReconciler;
  #version = 1;

  constructor() {
    const stored = <T extends KubeObject>(cache: FrozenCache<T>, object: T): T => {
      const copy = { ...object, metadata: { ...object.metadata, resourceVersion: String(++this.#version) } };
      cache.upsert(copy);
      return copy;
    };
    const patched = <T extends KubeObject>(cache: FrozenCache<T>, namespace: string, name: string, operations: Parameters<typeof applyOperations>[1]) =>
      stored(cache, applyOperations(cache.get(namespace, name)!, operations));
    this.reconciler = new PodDecorationReconciler({
      decorations: this.decorations,
      revisions: this.revisions,
      pods: this.pods,
      collaSets: this.collaSets,
      client: {
        podDecorations: {
          jsonPatch: (namespace, name, operations) => this.#write(`jsonPatch ${name}`, () => patched(this.decorations, namespace, name, operations)),
          jsonPatchStatus: (namespace, name, operations) =>
            this.#write(`jsonPatchStatus ${name}`, () => {
              if (this.staleStatus) {
                this.staleStatus = false;
                throw patchNotApplied();
              }
              return patched(this.decorations, namespace, name, operations);
            }),
        },
        controllerRevisions: {
          create: (revision) => this.#write(`create revision ${revision.metadata?.name ?? ""}`, () => stored(this.revisions, revision)),
          jsonPatch: (namespace, name, operations) => this.#write(`jsonPatch revision ${name}`, () => patched(this.revisions, namespace, name, operations)),
          delete: (namespace, name) => this.#write(`delete revision ${name}`, () => void this.revisions.delete(`${namespace}/${name}`)),
        },
      },
      dryRunCreate: (pod) => {
        this.dryRuns.push(pod);
        return Promise.resolve(this.verdict);
      },
      events: { record: (_object, type, reason) => this.events.push({ type, reason }) },
      clock: this.clock,
      logger: pino({ level: "silent" }),
    });
  }

  apply(spec: PodDecoration, finalizers?: string[]): void {
    const previous = this.decorations.get("shop", "certs");
    const generation = (previous?.metadata.generation ?? 0) + 1;
    this.decorations.upsert({
      ...spec,
      metadata: { ...spec.metadata, uid: UID, generation, resourceVersion: String(++this.#version), finalizers: finalizers ?? previous?.metadata.finalizers ?? [POD_DECORATION_FINALIZER] },
      ...(previous?.status === undefined ? {} : { status: previous.status }),
    } as CachedDecoration);
  }

  get decoration(): CachedDecoration {
    return this.decorations.get("shop", "certs")!;
  }

  reconcile() {
    return this.reconciler.reconcile("shop/certs");
  }

  /** The writes the next reconcile makes. */
  async writesOf(): Promise<string[]> {
    const before = this.writes.length;
    await this.reconcile();
    return this.writes.slice(before);
  }

  async #write<T>(what: string, perform: () => T): Promise<T> {
    this.writes.push(what);
    await Promise.resolve();
    return perform();
  }
}

const condition = (harness: Harness, type: string) => harness.decoration.status?.conditions?.find((item) => item.type === type);

describe("PodDecoration reconciler", () => {
  it("adds its finalizer before anything else, and writes nothing more in that pass", async () => {
    const harness = new Harness();
    harness.apply(decoration(), []);
    expect(await harness.writesOf()).toEqual(["jsonPatch certs"]);
    expect(harness.decoration.metadata.finalizers).toEqual([POD_DECORATION_FINALIZER]);
    expect(harness.revisions.list()).toEqual([]);
  });

  it("stores the spec's revision, judges it by one dry run, and writes status only when it changes", async () => {
    const harness = new Harness();
    harness.apply(decoration());
    await harness.reconcile();
    const [revision] = harness.revisions.list("shop");
    expect(revision?.metadata?.name).toBe(revisionName("certs", hashRevisionData(revisionData(decoration()))));
    expect(harness.decoration.status).toMatchObject({ updatedRevision: revision?.metadata?.name, observedGeneration: 1, collisionCount: 0, matchedPods: 0 });
    expect(condition(harness, "TemplateValid")).toMatchObject({ status: "True", reason: "DryRunAccepted" });
    expect(harness.dryRuns).toHaveLength(1);

    // Nothing changed: no write, and the verdict for the revision is remembered.
    expect(await harness.writesOf()).toEqual([]);
    expect(harness.dryRuns).toHaveLength(1);
  });

  it("reports a template the API server refuses as TemplateValid False, with a warning event, and Ready False", async () => {
    const harness = new Harness();
    harness.verdict = { valid: false, message: "admission webhook denied the request" };
    harness.apply(decoration());
    await harness.reconcile();
    expect(condition(harness, "TemplateValid")).toMatchObject({ status: "False", reason: "DryRunRejected", message: "admission webhook denied the request" });
    expect(condition(harness, "Ready")).toMatchObject({ status: "False", reason: "TemplateInvalid" });
    expect(harness.events).toContainEqual({ type: "Warning", reason: "TemplateInvalid" });
  });

  it("judges a new revision again when the spec changes", async () => {
    const harness = new Harness();
    harness.apply(decoration());
    await harness.reconcile();
    harness.apply(decoration("envoy:2"));
    await harness.reconcile();
    expect(harness.dryRuns).toHaveLength(2);
    expect(harness.revisions.list("shop")).toHaveLength(2);
  });

  it("reports an invalid spec without storing a revision", async () => {
    const harness = new Harness();
    harness.apply({ ...decoration(), spec: { ...decoration().spec, template: { containers: [{ name: "proxy" }] } } });
    await harness.reconcile();
    expect(condition(harness, "TemplateValid")).toMatchObject({ status: "False", reason: "Invalid", message: expect.stringContaining("image") as unknown });
    expect(harness.revisions.list()).toEqual([]);
    expect(harness.dryRuns).toEqual([]);
  });

  it("escapes a revision name taken by other data by counting the collision, then storing under the next name", async () => {
    const harness = new Harness();
    const taken = revisionName("certs", hashRevisionData(revisionData(decoration())));
    harness.revisions.upsert(buildControllerRevision({
      owner: { apiVersion: "apps.kusionstack.io/v1alpha1", kind: "PodDecoration", name: "certs", namespace: "shop", uid: UID },
      ownerLabelKey: "poddecoration.kusionstack.io/name",
      data: { other: true },
      hash: hashRevisionData(revisionData(decoration())),
      revision: 1,
    }));
    expect(harness.revisions.get("shop", taken)).toBeDefined();
    harness.apply(decoration());

    expect(await harness.writesOf()).toEqual(["jsonPatchStatus certs"]);
    expect(harness.decoration.status?.collisionCount).toBe(1);

    await harness.reconcile();
    const escaped = revisionName("certs", hashRevisionData(revisionData(decoration()), 1));
    expect(escaped).not.toBe(taken);
    expect(harness.revisions.get("shop", escaped)?.revision).toBe(2);
    expect(harness.decoration.status).toMatchObject({ updatedRevision: escaped, collisionCount: 1 });
  });

  it("does not write a status computed from a stale object over a newer one: it requeues", async () => {
    const harness = new Harness();
    harness.apply(decoration());
    harness.staleStatus = true;
    expect(await harness.reconcile()).toEqual({ requeueAfter: expect.any(Number) as unknown });
    expect(harness.decoration.status).toBeUndefined();
    await harness.reconcile();
    expect(harness.decoration.status?.updatedRevision).toBeDefined();
  });

  it("holds a deleted decoration while a CollaSet pod carries it, and releases it when none does", async () => {
    const harness = new Harness();
    harness.apply(decoration());
    await harness.reconcile();
    const revision = harness.decoration.status?.updatedRevision ?? "";
    const carrier: Pod = {
      metadata: {
        name: "web-0",
        namespace: "shop",
        labels: { app: "web" },
        annotations: { [REVISIONS_ANNOTATION]: formatRevisionsAnnotation([{ name: "certs", revision }]) },
        ownerReferences: [{ apiVersion: "apps.kusionstack.io/v1alpha1", kind: "CollaSet", name: "web", uid: "uid-web", controller: true }],
      },
      spec: { containers: [{ name: "app", image: "web:1" }] },
    };
    harness.pods.upsert(carrier);
    harness.collaSets.upsert({ metadata: { name: "web", namespace: "shop", uid: "uid-web" } });
    harness.decorations.upsert({ ...harness.decoration, metadata: { ...harness.decoration.metadata, deletionTimestamp: "2026-01-01T00:00:00Z" } });

    expect(await harness.writesOf()).toEqual([]);
    expect(harness.decoration.metadata.finalizers).toEqual([POD_DECORATION_FINALIZER]);

    // Only a live pod of the CollaSet that exists with the UID it names holds it: not one naming
    // another UID (an imposter, or a CollaSet of the same name in another namespace), nor one on
    // its way out or finished, nor one whose CollaSet is gone.
    const holds = async (pod: Pod) => {
      harness.pods.upsert(pod);
      const writes = await harness.reconciler.reconcile("shop/certs").then(() => harness.decoration.metadata.finalizers?.length === 1);
      harness.pods.upsert(carrier);
      return writes;
    };
    const withOwnerUid = (uid: string): Pod => ({ ...carrier, metadata: { ...carrier.metadata, ownerReferences: [{ ...carrier.metadata!.ownerReferences![0]!, uid }] } });
    const finalizers = harness.decoration.metadata.finalizers;
    const restore = () => harness.decorations.upsert({ ...harness.decoration, metadata: { ...harness.decoration.metadata, finalizers } });
    for (const [what, pod] of [
      ["an imposter's owner UID", withOwnerUid("uid-elsewhere")],
      ["a terminating pod", { ...carrier, metadata: { ...carrier.metadata, deletionTimestamp: "2026-01-01T00:00:00Z" } }],
      ["a failed pod", { ...carrier, status: { phase: "Failed" } }],
    ] as [string, Pod][]) {
      expect(await holds(pod), what).toBe(false);
      restore();
    }
    harness.collaSets.delete("shop/web");
    expect(await holds(carrier), "a pod whose CollaSet is gone").toBe(false);
    restore();
    harness.collaSets.upsert({ metadata: { name: "web", namespace: "shop", uid: "uid-web" } });
    expect(await harness.writesOf()).toEqual([]);

    // A pod that is not a CollaSet's does not hold the decoration.
    harness.pods.upsert({ ...carrier, metadata: { ...carrier.metadata, ownerReferences: [] } });
    expect(await harness.writesOf()).toEqual(["jsonPatch certs"]);
    expect(harness.decoration.metadata.finalizers).toEqual([]);
    expect(harness.events).toContainEqual({ type: "Normal", reason: "Released" });
  });

  it("forgets a deleted decoration's verdict, and judges a new decoration of the same name afresh", async () => {
    const harness = new Harness();
    harness.apply(decoration());
    await harness.reconcile();
    harness.decorations.delete("shop/certs");
    await harness.reconcile();
    const again = decoration();
    harness.decorations.upsert({ ...again, metadata: { ...again.metadata, uid: "uid-certs-2", generation: 1, resourceVersion: "900", finalizers: [POD_DECORATION_FINALIZER] } } as CachedDecoration);
    await harness.reconcile();
    expect(harness.dryRuns).toHaveLength(2);
  });
});

describe("storedTemplates", () => {
  // What status judges pods by: a pod records its namespace's PodDecorations and the
  // ClusterPodDecorations selecting it, whose revisions live in the release namespace.
  const stored = (namespace: string, name: string, image: string): ControllerRevision => ({
    apiVersion: "apps/v1",
    kind: "ControllerRevision",
    metadata: { name, namespace },
    data: revisionData({ ...decoration(image), metadata: { name: "certs", namespace } }),
    revision: 1,
  });

  it("reads a PodDecoration's revision in the pod's namespace and a ClusterPodDecoration's in the release namespace", () => {
    const namespaced = new FrozenCache<ControllerRevision>();
    namespaced.upsert(stored("shop", "certs-1", "envoy:1"));
    namespaced.upsert(stored("pod-decorator-system", "certs-1", "envoy:wrong"));
    const cluster = new FrozenCache<ControllerRevision>();
    cluster.upsert(stored("pod-decorator-system", "mesh-1", "envoy:2"));
    cluster.upsert(stored("shop", "mesh-1", "envoy:wrong"));
    const template = storedTemplates(namespaced, { revisions: cluster, namespace: "pod-decorator-system" });
    expect(template("shop", "certs", "certs-1")?.containers?.[0]?.image).toBe("envoy:1");
    expect(template("shop", clusterKey("mesh"), "mesh-1")?.containers?.[0]?.image).toBe("envoy:2");
    expect(template("other", "certs", "certs-1")).toBeUndefined();
    expect(template("shop", clusterKey("mesh"), "certs-1")).toBeUndefined();
  });

  it("finds nothing of a kind whose cache it is not given", () => {
    const revisions = new FrozenCache<ControllerRevision>();
    revisions.upsert(stored("shop", "certs-1", "envoy:1"));
    revisions.upsert(stored("pod-decorator-system", "mesh-1", "envoy:2"));
    expect(storedTemplates(revisions)("shop", clusterKey("mesh"), "mesh-1")).toBeUndefined();
    expect(storedTemplates(undefined, { revisions, namespace: "pod-decorator-system" })("shop", "certs", "certs-1")).toBeUndefined();
  });
});
