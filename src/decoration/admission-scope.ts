// Which pods the pod webhook is called for (DESIGN §10, "Scope is one definition"): the
// namespace selector, object selector and match conditions of the pods webhook, built here for
// every configuration that carries them (serve's own, the chart's and config/ are checked against
// it), and the same scope judged for a pod the controllers are about to move — a pod is evicted
// only when the webhook will decorate its replacement. Pure.
//
// Nothing is excluded by a pod's own labels: a pod author could set them. pod-decorator's own
// pods stay out because their namespace (the release namespace) is excluded.
import type { LabelSelector, Labels } from "../api/label-selector.ts";
import { selectorMatches } from "./selector.ts";

/** Namespaces labelled with this set to `disabled` are never decorated; with opt-in, only `enabled` ones are. */
export const INJECTION_LABEL = "poddecoration.kusionstack.io/injection";
/** The annotation the kubelet puts on a mirror pod (the API server's copy of a static pod). */
export const MIRROR_POD_ANNOTATION = "kubernetes.io/config.mirror";
/** The label the API server sets on every namespace, to its name. */
export const NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name";

export const DEFAULT_EXCLUDED_NAMESPACES: readonly string[] = ["kube-system", "kube-public", "kube-node-lease"];

export interface AdmissionScopeOptions {
  /** Namespaces whose pods are never sent to the pod webhook (default: DEFAULT_EXCLUDED_NAMESPACES). */
  excludedNamespaces?: readonly string[] | undefined;
  /** pod-decorator's own namespace: excluded, so its pods never wait for themselves. */
  ownNamespace?: string | undefined;
  /** cert-manager's namespace, when it issues the serving certificate: excluded too. */
  certManagerNamespace?: string | undefined;
  /** Only namespaces labelled poddecoration.kusionstack.io/injection=enabled are decorated. */
  optIn?: boolean | undefined;
  /** Further namespace conditions, ANDed with the above. */
  namespaceSelector?: LabelSelector | undefined;
  /** Only pods matching this are sent to the webhook. */
  objectSelector?: LabelSelector | undefined;
}

export interface MatchCondition {
  name: string;
  expression: string;
}

/** The pods webhook's scope fields, as the API server reads them. */
export interface AdmissionScope {
  namespaceSelector: LabelSelector;
  objectSelector?: LabelSelector;
  matchConditions: MatchCondition[];
}

interface PodMetadata {
  labels?: Labels | undefined;
  annotations?: Readonly<Record<string, string>> | undefined;
}

/** Each match condition with what it means for a pod, so both readings stay one definition. */
const MATCH_CONDITIONS: readonly (MatchCondition & { excludes: (metadata: PodMetadata) => string | undefined })[] = [
  {
    name: "not-a-mirror-pod",
    expression: `!has(object.metadata.annotations) || !('${MIRROR_POD_ANNOTATION}' in object.metadata.annotations)`,
    excludes: (metadata) => (metadata.annotations?.[MIRROR_POD_ANNOTATION] === undefined ? undefined : "it is a mirror pod (a static pod's copy)"),
  },
];

export function excludedNamespaces(options: AdmissionScopeOptions): string[] {
  return [...new Set([
    ...(options.excludedNamespaces ?? DEFAULT_EXCLUDED_NAMESPACES),
    ...(options.ownNamespace === undefined ? [] : [options.ownNamespace]),
    ...(options.certManagerNamespace === undefined ? [] : [options.certManagerNamespace]),
  ])];
}

export function admissionScope(options: AdmissionScopeOptions): AdmissionScope {
  const extra = options.namespaceSelector ?? {};
  const objectSelector = options.objectSelector;
  return {
    namespaceSelector: {
      ...(extra.matchLabels === undefined || Object.keys(extra.matchLabels).length === 0 ? {} : { matchLabels: { ...extra.matchLabels } }),
      matchExpressions: [
        { key: NAMESPACE_NAME_LABEL, operator: "NotIn", values: excludedNamespaces(options) },
        options.optIn === true ? { key: INJECTION_LABEL, operator: "In", values: ["enabled"] } : { key: INJECTION_LABEL, operator: "NotIn", values: ["disabled"] },
        ...(extra.matchExpressions ?? []),
      ],
    },
    ...(objectSelector === undefined || isEmpty(objectSelector) ? {} : { objectSelector }),
    matchConditions: MATCH_CONDITIONS.map(({ name, expression }) => ({ name, expression })),
  };
}

/** The labels a namespace is selected by: its own and the name label the API server sets (a namespace read without it still has its name). */
export function namespaceSelectionLabels(name: string, labels: Labels | undefined): Labels {
  return { ...labels, [NAMESPACE_NAME_LABEL]: name };
}

export interface ScopedNamespace {
  name: string;
  labels?: Labels | undefined;
}

/**
 * Why the pod webhook is not called for `pod` in `namespace`, or undefined when it is. The
 * namespace undefined: not known (yet), so nothing can be promised about it.
 */
export function outsideAdmissionScope(scope: AdmissionScope, namespace: ScopedNamespace | undefined, pod: PodMetadata): string | undefined {
  if (namespace === undefined) return "its namespace is not known to pod-decorator yet";
  const labels = namespaceSelectionLabels(namespace.name, namespace.labels);
  if (!selectorMatches(scope.namespaceSelector, labels)) return `the webhook is not called for pods in namespace ${namespace.name} (its namespaceSelector)`;
  if (scope.objectSelector !== undefined && !selectorMatches(scope.objectSelector, pod.labels ?? {})) return "the webhook is not called for pods with its labels (its objectSelector)";
  for (const condition of MATCH_CONDITIONS) {
    const reason = condition.excludes(pod);
    if (reason !== undefined) return `the webhook is not called for it: ${reason}`;
  }
  return undefined;
}

function isEmpty(selector: LabelSelector): boolean {
  return Object.keys(selector.matchLabels ?? {}).length === 0 && (selector.matchExpressions ?? []).length === 0;
}
