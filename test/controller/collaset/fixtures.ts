// Small builders for the CollaSet planning tests: a CollaSet, its pods as the cache holds
// them, and revision sources backed by plain maps.
import type { CollaSet } from "../../../src/api/collaset.ts";
import type { PodTemplateSpec } from "../../../src/api/kubernetes.ts";
import type { PodDecoration } from "../../../src/api/poddecoration.ts";
import { decorationLabelKey, formatRevisionsAnnotation, REVISIONS_ANNOTATION } from "../../../src/decoration/recording.ts";
import type { DecorationToApply } from "../../../src/decoration/render.ts";
import type { RevisionSources } from "../../../src/controller/collaset/slot-pod.ts";
import type { Pod } from "../../../src/kube/objects.ts";
import { RESTARTED_CONTAINERS_ANNOTATION } from "../../../src/controller/pod-update.ts";

export function template(image = "nginx:1.27", env = "blue"): PodTemplateSpec {
  return { metadata: { labels: { app: "web" } }, spec: { containers: [{ name: "app", image, env: [{ name: "MODE", value: env }] }] } };
}

export function collaSet(spec: Partial<CollaSet["spec"]> = {}): CollaSet {
  return {
    apiVersion: "apps.kusionstack.io/v1alpha1",
    kind: "CollaSet",
    metadata: { name: "web", namespace: "shop", uid: "cls-uid", generation: 1 },
    spec: { replicas: 3, selector: { matchLabels: { app: "web" } }, template: template(), ...spec },
  };
}

export interface PodOptions {
  id?: number | undefined;
  template?: string;
  decorations?: Record<string, string>;
  ready?: boolean;
  terminating?: boolean;
  finalizers?: string[];
  images?: Record<string, string>;
  /** Images the node reports running (default: the spec's). */
  running?: Record<string, string>;
  createdAt?: string;
}

const containerId = (container: string) => `containerd://${container}-1`;

export function pod(name: string, options: PodOptions = {}): Pod {
  const images = options.images ?? { app: "nginx:1.27" };
  const running = options.running ?? images;
  const inPlaceInProgress = Object.keys(running).filter((n) => running[n] !== images[n]);
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      name,
      namespace: "shop",
      uid: `uid-${name}`,
      resourceVersion: "7",
      creationTimestamp: options.createdAt ?? "2026-11-01T00:00:00Z",
      labels: {
        app: "web",
        ...(options.id === undefined ? {} : { "collaset.kusionstack.io/instance-id": String(options.id) }),
        "controller-revision-hash": options.template ?? "web-r1",
        // As rendered: a label recording each decoration's revision.
        ...Object.fromEntries(Object.entries(options.decorations ?? {}).map(([n, revision]) => [decorationLabelKey(n), revision])),
      },
      annotations: {
        [REVISIONS_ANNOTATION]: formatRevisionsAnnotation(Object.entries(options.decorations ?? {}).map(([n, revision]) => ({ name: n, revision }))),
        // A node running other images than the spec names is an in-place update in progress, as the controller records one.
        ...(inPlaceInProgress.length === 0 ? {} : { [RESTARTED_CONTAINERS_ANNOTATION]: JSON.stringify(Object.fromEntries(inPlaceInProgress.map((n) => [n, containerId(n)]))) }),
      },
      ownerReferences: [{ apiVersion: "apps.kusionstack.io/v1alpha1", kind: "CollaSet", name: "web", uid: "cls-uid", controller: true }],
      ...(options.terminating === true ? { deletionTimestamp: "2026-11-02T00:00:00Z" } : {}),
      ...(options.finalizers === undefined ? {} : { finalizers: options.finalizers }),
    },
    spec: { containers: Object.entries(images).map(([n, image]) => ({ name: n, image })) },
    status: {
      phase: "Running",
      conditions: [{ type: "Ready", status: options.ready === false ? "False" : "True" }],
      containerStatuses: Object.entries(running).map(([n, image]) => ({ name: n, image, imageID: "", containerID: containerId(n), ready: true, restartCount: 0 })),
    },
  };
}

export function sidecarRevision(name: string, revision: string, image: string, extra: Partial<DecorationToApply> = {}): DecorationToApply {
  return { name, namespace: "shop", revisionName: revision, template: { containers: [{ name: `${name}-sidecar`, image }] }, injectStrategy: { group: "", weight: 0 }, ...extra };
}

export function sources(templates: Record<string, PodTemplateSpec>, decorations: DecorationToApply[] = []): RevisionSources {
  return {
    template: (revision) => templates[revision],
    decoration: (name, revision) => decorations.find((item) => item.name === name && item.revisionName === revision),
  };
}

export function podDecoration(name: string, spec: Partial<PodDecoration["spec"]> = {}, metadata: Partial<PodDecoration["metadata"]> = {}): PodDecoration {
  return {
    apiVersion: "apps.kusionstack.io/v1alpha1",
    kind: "PodDecoration",
    metadata: { name, namespace: "shop", creationTimestamp: "2026-11-01T00:00:00Z", ...metadata },
    spec: { selector: { matchLabels: { app: "web" } }, ...spec },
  };
}
