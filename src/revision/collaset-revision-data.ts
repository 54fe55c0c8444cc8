// What a CollaSet revision is (DESIGN §4, §6): its pod template and, when it has any, its
// volumeClaimTemplates (kuperator's revision patch holds both: pkg/controllers/collaset
// collaset_controller.go GetXSetPatch). Replicas, update and scale strategies are not part of
// it: changing them updates no pod. A CollaSet without claim templates has the data it always
// had, so its revision names do not move.
import type { CollaSet } from "../api/collaset.ts";
import type { PodTemplateSpec } from "../api/kubernetes.ts";
import { cloneJson } from "../api/json.ts";
import { claimTemplateHash } from "./claim-template-hash.ts";

export const COLLASET_NAME_LABEL = "collaset.kusionstack.io/name";

export interface CollaSetRevisionData {
  template: PodTemplateSpec;
  volumeClaimTemplates?: unknown[];
}

export function collaSetRevisionData(cls: CollaSet): CollaSetRevisionData {
  const claims = cls.spec.volumeClaimTemplates ?? [];
  return { template: cloneJson(cls.spec.template), ...(claims.length === 0 ? {} : { volumeClaimTemplates: cloneJson(claims) }) };
}

/**
 * The pod template a stored revision holds, or undefined when its data is not a CollaSet
 * revision. Each claim template becomes a volume of its name (in front, replacing a volume of
 * the same name, as kube-xset's CreateTargetPvcs orders them) whose claim is a placeholder
 * naming the template's hash: two revisions whose claim templates differ render different
 * pods, so the change recreates the pod (kuperator: PvcTmpHashChanged rules out in place).
 * The controller points the volume at the instance's real claim when it creates the pod.
 */
export function templateOf(data: unknown): PodTemplateSpec | undefined {
  if (typeof data !== "object" || data === null) return undefined;
  const template = (data as { template?: unknown }).template;
  if (typeof template !== "object" || template === null) return undefined;
  const spec = (template as { spec?: unknown }).spec;
  if (typeof spec !== "object" || spec === null || !Array.isArray((spec as { containers?: unknown }).containers)) return undefined;
  const claims = (data as { volumeClaimTemplates?: unknown }).volumeClaimTemplates;
  if (!Array.isArray(claims) || claims.length === 0) return template as PodTemplateSpec;
  const podTemplate = template as PodTemplateSpec;
  const volumes = claims.map((claim) => {
    const name = claimTemplateName(claim);
    return { name, persistentVolumeClaim: { claimName: placeholderClaimName(name, claimTemplateHash(claim)) } };
  });
  const names = new Set(volumes.map((volume) => volume.name));
  const others = (podTemplate.spec?.volumes ?? []).filter((volume) => !names.has(volume.name));
  return { ...podTemplate, spec: { ...podTemplate.spec!, volumes: [...volumes, ...others] } };
}

export function claimTemplateName(claim: unknown): string {
  const name = (claim as { metadata?: { name?: unknown } } | null)?.metadata?.name;
  return typeof name === "string" ? name : "";
}

const PLACEHOLDER_PREFIX = "volumeclaimtemplate:";

/** Not a valid object name, so a pod that kept it by mistake fails loudly instead of finding a claim. */
export function placeholderClaimName(templateName: string, hash: string): string {
  return `${PLACEHOLDER_PREFIX}${templateName}:${hash}`;
}

export function isPlaceholderClaimName(claimName: string | undefined): boolean {
  return claimName?.startsWith(PLACEHOLDER_PREFIX) ?? false;
}
