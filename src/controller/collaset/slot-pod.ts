// The pod a CollaSet slot should have: its template revision rendered into a pod with the
// instance id, plus the decoration revisions chosen for it, recorded as the webhook would
// (DESIGN §5: the CollaSet controller renders its own pods; `[]` says "decided: none").
// Pure: revisions come from the caller's caches.
import type { CollaSet } from "../../api/collaset.ts";
import { cloneJson } from "../../api/json.ts";
import type { PodTemplateSpec } from "../../api/kubernetes.ts";
import type { Pod } from "../../api/pod.ts";
import { API_VERSION } from "../../api/group.ts";
import { formatRevisionsAnnotation, REVISIONS_ANNOTATION } from "../../decoration/recording.ts";
import { renderPod, type DecorationToApply } from "../../decoration/render.ts";
import { CONTROL_LABEL, SERVICE_READY_GATE } from "../lifecycle/pod-ops-lifecycle.ts";
import { INSTANCE_ID_LABEL, TEMPLATE_REVISION_LABEL } from "./pod-state.ts";
import { isPersistentSequence, podNamePrefix, sequenceName } from "./naming.ts";

/** What a pod is made of: a template revision and decoration revisions by decoration name. */
export interface PodRevisions {
  template: string;
  decorations: ReadonlyMap<string, string>;
}

export interface RevisionSources {
  template(revision: string): PodTemplateSpec | undefined;
  /** A stored decoration revision, with what ordering needs of the decoration. */
  decoration(name: string, revision: string): DecorationToApply | undefined;
}

export function sameRevisions(a: PodRevisions, b: PodRevisions): boolean {
  if (a.template !== b.template || a.decorations.size !== b.decorations.size) return false;
  for (const [name, revision] of a.decorations) if (b.decorations.get(name) !== revision) return false;
  return true;
}

/**
 * The slot's pod (to create, or to compare with), or undefined when a revision is not known.
 * Throws a DecorationError when a decoration cannot be rendered into it (see renderPod).
 */
export function slotPod(cls: CollaSet, instanceId: number, revisions: PodRevisions, sources: RevisionSources, options: { lifecycle?: boolean } = {}): Pod | undefined {
  const template = sources.template(revisions.template);
  if (template === undefined) return undefined;
  const decorations: DecorationToApply[] = [];
  for (const [name, revision] of revisions.decorations) {
    const decoration = sources.decoration(name, revision);
    if (decoration === undefined) return undefined;
    decorations.push(decoration);
  }
  const { name = "", namespace, uid = "" } = cls.metadata;
  const metadata = cloneJson(template.metadata ?? {});
  const base: Pod = {
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      // namingStrategy (naming.ts): a name from the instance id, or one the API server makes.
      generateName: podNamePrefix(name),
      ...(isPersistentSequence(cls) ? { name: sequenceName(cls, instanceId) } : {}),
      namespace,
      labels: { ...metadata.labels, [INSTANCE_ID_LABEL]: String(instanceId), [TEMPLATE_REVISION_LABEL]: revisions.template },
      annotations: { ...metadata.annotations, [REVISIONS_ANNOTATION]: formatRevisionsAnnotation([]) },
      ownerReferences: [{ apiVersion: API_VERSION, kind: "CollaSet", name, uid, controller: true, blockOwnerDeletion: true }],
    },
    spec: cloneJson(template.spec ?? { containers: [] }),
  };
  if (options.lifecycle === true) {
    // PodOpsLifecycle: the pod carries the gate from creation, so traffic can be turned off before an update.
    base.metadata!.labels![CONTROL_LABEL] = "true";
    // readinessGates is carried through untyped (the API types leave it open).
    const spec = base.spec as { readinessGates?: { conditionType?: string }[] };
    const gates = Array.isArray(spec.readinessGates) ? spec.readinessGates : [];
    if (!gates.some((gate) => gate.conditionType === SERVICE_READY_GATE)) spec.readinessGates = [...gates, { conditionType: SERVICE_READY_GATE }];
  }
  return renderPod(base, decorations).pod;
}
