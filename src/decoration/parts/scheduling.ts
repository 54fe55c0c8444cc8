// Steps 6–8 of rendering a decoration: affinity, tolerations and runtime class. `spec` is the
// renderer's own; what is under it is the input pod's, so it is replaced, never changed.
import type { NodeSelectorRequirement, NodeSelectorTerm, PodSpec, Toleration } from "../../api/kubernetes.ts";
import type { PodDecorationTemplate } from "../../api/poddecoration.ts";
import { cloneJson } from "../../api/json.ts";
import { isPresent } from "./present.ts";

type DecorationAffinity = NonNullable<PodDecorationTemplate["affinity"]>;

/**
 * `overrideAffinity` replaces each sub-affinity it gives. `nodeSelectorTerms` are ANDed into
 * the pod's required terms: the terms are ORed, so AND is the cross product of the two lists,
 * and the pod can only become harder to schedule, never easier.
 */
export function renderAffinity(spec: PodSpec, affinity: DecorationAffinity): void {
  const override = affinity.overrideAffinity;
  if (override !== undefined) {
    if (override.nodeAffinity !== undefined) spec.affinity = { ...spec.affinity, nodeAffinity: cloneJson(override.nodeAffinity) };
    if (override.podAffinity !== undefined) spec.affinity = { ...spec.affinity, podAffinity: cloneJson(override.podAffinity) };
    if (override.podAntiAffinity !== undefined) spec.affinity = { ...spec.affinity, podAntiAffinity: cloneJson(override.podAntiAffinity) };
  }
  const terms = affinity.nodeSelectorTerms ?? [];
  if (terms.length === 0) return;
  const nodeAffinity = spec.affinity?.nodeAffinity;
  const required = nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution;
  const podTerms = required?.nodeSelectorTerms ?? [];
  const combined = podTerms.length === 0 ? cloneJson([...terms]) : podTerms.flatMap((podTerm) => terms.map((term) => andTerms(podTerm, term)));
  spec.affinity = { ...spec.affinity, nodeAffinity: { ...nodeAffinity, requiredDuringSchedulingIgnoredDuringExecution: { ...required, nodeSelectorTerms: combined } } };
}

function andTerms(podTerm: NodeSelectorTerm, term: NodeSelectorTerm): NodeSelectorTerm {
  // A null term decodes to the empty term, which matches no node: ANDed, it still matches none.
  if (!isPresent(podTerm)) return podTerm;
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
 * Tolerations are additive: the pod's stay as they are, in order (a decoration never drops
 * one, whatever its key), and the decoration's are appended unless an identical one is there.
 */
export function renderTolerations(spec: PodSpec, tolerations: readonly Toleration[]): void {
  if (tolerations.length === 0) return;
  const result = [...(spec.tolerations ?? [])];
  const present = new Set(result.filter(isPresent).map(tolerationIdentity));
  for (const toleration of tolerations) {
    const identity = tolerationIdentity(toleration);
    if (present.has(identity)) continue;
    present.add(identity);
    result.push(cloneJson(toleration));
  }
  spec.tolerations = result;
}

/** What a toleration tolerates, with the spellings Kubernetes reads alike ("" and Equal, absent and "") made one. */
function tolerationIdentity(toleration: Toleration): string {
  const operator = toleration.operator === undefined || toleration.operator === "" ? "Equal" : toleration.operator;
  return JSON.stringify([toleration.key ?? "", operator, toleration.value ?? "", toleration.effect ?? "", toleration.tolerationSeconds ?? null]);
}

export function renderRuntimeClass(spec: PodSpec, runtimeClassName: string | undefined): void {
  if (runtimeClassName !== undefined && runtimeClassName !== "") spec.runtimeClassName = runtimeClassName;
}
