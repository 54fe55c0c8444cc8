// What a CollaSet revision is (DESIGN §4, §6): its pod template, nothing else. Replicas,
// update and scale strategies are not part of it: changing them updates no pod.
import type { CollaSet } from "../api/collaset.ts";
import type { PodTemplateSpec } from "../api/kubernetes.ts";
import { cloneJson } from "../api/json.ts";

export const COLLASET_NAME_LABEL = "collaset.kusionstack.io/name";

export interface CollaSetRevisionData {
  template: PodTemplateSpec;
}

export function collaSetRevisionData(cls: CollaSet): CollaSetRevisionData {
  return { template: cloneJson(cls.spec.template) };
}

/** The template a stored revision holds, or undefined when its data is not a CollaSet revision. */
export function templateOf(data: unknown): PodTemplateSpec | undefined {
  if (typeof data !== "object" || data === null) return undefined;
  const template = (data as { template?: unknown }).template;
  if (typeof template !== "object" || template === null) return undefined;
  const spec = (template as { spec?: unknown }).spec;
  if (typeof spec !== "object" || spec === null || !Array.isArray((spec as { containers?: unknown }).containers)) return undefined;
  return template as PodTemplateSpec;
}
