// What a PodTransitionRule writes on each pod it selects, as kuperator writes it: the annotation
// `detail.podtransitionrule.kusionstack.io/<rule>` holding the pod's verdict in its current
// stage (`{"stage":"PreCheck","passed":false,"rejectInfo":[...]}`, `{"stage":"Unknown","passed":true}`
// outside one), and the annotation with which a pod skips rules by name
// (`podtransitionrule.kusionstack.io/skip-rule-conditions: {"skipRules":[...]}`). Pure.
import type { Pod } from "../../kube/objects.ts";

/** kube-api's AnnotationPodTransitionRuleDetailPrefix. */
export const DETAIL_ANNOTATION_PREFIX = "detail.podtransitionrule.kusionstack.io";
/** kube-api's AnnotationPodSkipRuleConditions. */
export const SKIP_RULES_ANNOTATION = "podtransitionrule.kusionstack.io/skip-rule-conditions";
/** The stage kuperator records for a selected pod in no stage. */
export const UNKNOWN_STAGE = "Unknown";

export interface RejectInfo {
  ruleName?: string;
  reason?: string;
}

/** A pod's verdict as the annotation holds it (kube-api's PodTransitionDetail without name and passedRules). */
export interface PodVerdict {
  stage: string;
  passed: boolean;
  rejectInfo?: RejectInfo[];
}

export function detailAnnotation(transitionRule: string): string {
  return `${DETAIL_ANNOTATION_PREFIX}/${transitionRule}`;
}

/** The annotation's text: Go's field order (stage, passed, rejectInfo), rejectInfo left out when empty. */
export function formatVerdict(verdict: PodVerdict): string {
  return JSON.stringify({ stage: verdict.stage, passed: verdict.passed, ...((verdict.rejectInfo ?? []).length === 0 ? {} : { rejectInfo: verdict.rejectInfo }) });
}

/** The verdict the rule recorded on the pod; undefined when it recorded none or one that is not its JSON. */
export function recordedVerdict(pod: Pod, transitionRule: string): PodVerdict | undefined {
  const text = pod.metadata?.annotations?.[detailAnnotation(transitionRule)];
  if (text === undefined || text.length > 64 * 1024) return undefined;
  try {
    const parsed = JSON.parse(text) as { stage?: unknown; passed?: unknown; rejectInfo?: unknown } | null;
    if (parsed === null || typeof parsed !== "object" || typeof parsed.stage !== "string" || typeof parsed.passed !== "boolean") return undefined;
    const rejectInfo = Array.isArray(parsed.rejectInfo) ? parsed.rejectInfo.filter((item): item is RejectInfo => typeof item === "object" && item !== null) : undefined;
    return { stage: parsed.stage, passed: parsed.passed, ...(rejectInfo === undefined ? {} : { rejectInfo }) };
  } catch {
    return undefined;
  }
}

/** The rules the pod asks to skip by name; an annotation that is not kuperator's JSON skips none. */
export function skippedRules(pod: Pod): Set<string> {
  const text = pod.metadata?.annotations?.[SKIP_RULES_ANNOTATION];
  if (text === undefined || text === "" || text.length > 64 * 1024) return new Set();
  try {
    const parsed = JSON.parse(text) as { skipRules?: unknown } | null;
    return new Set(Array.isArray(parsed?.skipRules) ? parsed.skipRules.filter((rule): rule is string => typeof rule === "string") : []);
  } catch {
    return new Set();
  }
}
