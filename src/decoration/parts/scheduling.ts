// Steps 6–8 of rendering a decoration: affinity, tolerations and runtime class.
import type { NodeSelectorRequirement, NodeSelectorTerm, PodSpec, Toleration } from "../../api/kubernetes.ts";
import type { PodDecorationTemplate } from "../../api/poddecoration.ts";
import { cloneJson } from "../../api/json.ts";

type DecorationAffinity = NonNullable<PodDecorationTemplate["affinity"]>;

/**
 * `overrideAffinity` replaces each sub-affinity it gives. `nodeSelectorTerms` are ANDed into
 * the pod's required terms: the terms are ORed, so AND is the cross product of the two lists,
 * and the pod can only become harder to schedule, never easier.
 */
export function renderAffinity(spec: PodSpec, affinity: DecorationAffinity): void {
  const override = affinity.overrideAffinity;
  if (override !== undefined) {
    if (override.nodeAffinity !== undefined) (spec.affinity ??= {}).nodeAffinity = cloneJson(override.nodeAffinity);
    if (override.podAffinity !== undefined) (spec.affinity ??= {}).podAffinity = cloneJson(override.podAffinity);
    if (override.podAntiAffinity !== undefined) (spec.affinity ??= {}).podAntiAffinity = cloneJson(override.podAntiAffinity);
  }
  const terms = affinity.nodeSelectorTerms ?? [];
  if (terms.length === 0) return;
  const nodeAffinity = ((spec.affinity ??= {}).nodeAffinity ??= {});
  const required = nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution;
  const podTerms = required?.nodeSelectorTerms ?? [];
  const combined = podTerms.length === 0 ? cloneJson([...terms]) : podTerms.flatMap((podTerm) => terms.map((term) => andTerms(podTerm, term)));
  nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution = { ...required, nodeSelectorTerms: combined };
}

function andTerms(podTerm: NodeSelectorTerm, term: NodeSelectorTerm): NodeSelectorTerm {
  const podExpressions = podTerm.matchExpressions ?? [];
  const podFields = podTerm.matchFields ?? [];
  // An empty term matches no node; ANDed with anything it still must match none.
  if (podExpressions.length === 0 && podFields.length === 0) return cloneJson(podTerm);
  // The pod's term keeps whatever else it holds (fields of a newer Kubernetes).
  const { matchExpressions: _expressions, matchFields: _fields, ...rest } = cloneJson(podTerm);
  const result: NodeSelectorTerm = rest;
  const expressions = uniqueRequirements([...podExpressions, ...(term.matchExpressions ?? [])]);
  const fields = uniqueRequirements([...podFields, ...(term.matchFields ?? [])]);
  if (expressions.length > 0) result.matchExpressions = expressions;
  if (fields.length > 0) result.matchFields = fields;
  return result;
}

function uniqueRequirements(requirements: readonly NodeSelectorRequirement[]): NodeSelectorRequirement[] {
  const seen = new Set<string>();
  const result: NodeSelectorRequirement[] = [];
  for (const requirement of requirements) {
    const id = JSON.stringify([requirement.key, requirement.operator, requirement.values ?? []]);
    if (seen.has(id)) continue;
    seen.add(id);
    result.push(cloneJson(requirement));
  }
  return result;
}

/**
 * Tolerations keyed by `key`: the decoration's tolerations for a key take the place of the
 * pod's tolerations for that key (at the first of them); other pod tolerations keep their
 * order; keys the pod lacks are appended. A key may carry several tolerations (one per
 * effect), so the unit replaced is the key's group, not a single entry.
 */
export function renderTolerations(spec: PodSpec, tolerations: readonly Toleration[]): void {
  if (tolerations.length === 0) return;
  const byKey = new Map<string, Toleration[]>();
  for (const toleration of tolerations) {
    const key = toleration.key ?? "";
    const group = byKey.get(key);
    if (group === undefined) byKey.set(key, [cloneJson(toleration)]);
    else group.push(cloneJson(toleration));
  }
  const result: Toleration[] = [];
  const placed = new Set<string>();
  for (const toleration of spec.tolerations ?? []) {
    const key = toleration.key ?? "";
    const replacement = byKey.get(key);
    if (replacement === undefined) {
      result.push(toleration);
    } else if (!placed.has(key)) {
      result.push(...replacement);
      placed.add(key);
    }
  }
  for (const [key, group] of byKey) if (!placed.has(key)) result.push(...group);
  spec.tolerations = result;
}

export function renderRuntimeClass(spec: PodSpec, runtimeClassName: string | undefined): void {
  if (runtimeClassName !== undefined && runtimeClassName !== "") spec.runtimeClassName = runtimeClassName;
}
