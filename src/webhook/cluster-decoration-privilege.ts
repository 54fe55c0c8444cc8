// What writing a ClusterPodDecoration is allowed to mean (DESIGN §12, Trust): it runs what it
// injects in the pods of every namespace it selects, so its writer must be allowed to create pods
// in every namespace (a SubjectAccessReview without a namespace); its template must keep the
// pods of every namespace it selects now admissible under their Pod Security Standards (refused
// naming the namespace and the rule; one labelled in later is reported in status); with each
// namespace's own decorations it may select one another no deeper than a pod's rounds; and
// out-ranking another ClusterPodDecoration needs the right to update it. Checked when the spec is
// created or changed.
import { forbiddenError, formatFieldError } from "../api/field-errors.ts";
import { CLUSTER_POD_DECORATION_KIND } from "../api/group.ts";
import type { Labels } from "../api/label-selector.ts";
import { withoutNullFields } from "../api/null-fields.ts";
import type { PodDecoration } from "../api/poddecoration.ts";
import { asSeenFrom, type ClusterPodDecoration } from "../api/cluster-poddecoration.ts";
import { decorationKey } from "../decoration/decoration-kind.ts";
import { DEFAULT_DECORATION_BOUNDS, type DecorationBounds } from "../decoration/engine-bounds.ts";
import { outRankedDecorations } from "../decoration/out-ranking.ts";
import { selectorMatches } from "../decoration/selector.ts";
import { longestSelectionChain } from "../decoration/selection-chains.ts";
import type { AccessReviewer } from "../kube/access-review.ts";
import { statusMessage } from "../kube/errors.ts";
import { allow, deny } from "./admission-review.ts";
import { changesSpec, outRankingRefusal, subjectOf, withWarningsOf } from "./decoration-privilege.ts";
import { namespaceStandards } from "../decoration/pod-security-standards.ts";
import { requesterName } from "./requester-trust.ts";
import type { AdmissionDecision, AdmissionHandler, SynchronousAdmissionHandler } from "./server.ts";

export interface ClusterPrivilegeChecks {
  reviewAccess: AccessReviewer;
  /** Every ClusterPodDecoration the webhook's cache holds. */
  clusterDecorations(): readonly ClusterPodDecoration[];
  /** The namespaces the pod webhook is called for, with their labels (the namespace informer's). */
  namespacesInScope(): readonly { name: string; labels: Labels }[];
  /** A namespace's decorations as its pods get them (its own and the cluster ones selecting it). */
  namespaceDecorations(namespace: string): readonly PodDecoration[];
  bounds?: DecorationBounds;
}

/** Namespaces and warnings named at most in one answer: a fleet is thousands. */
const NAMED_AT_MOST = 5;

export function withClusterPrivilegeChecks(structural: SynchronousAdmissionHandler, checks: ClusterPrivilegeChecks): AdmissionHandler {
  return async (request) => {
    const decision = structural(request);
    if (!decision.response.allowed || !changesSpec(request, CLUSTER_POD_DECORATION_KIND)) return decision;
    const cpd = withoutNullFields(request.object as ClusterPodDecoration);
    const name = cpd.metadata.name ?? request.name;
    const refuse = (code: number, why: string, path = ""): AdmissionDecision => ({ response: deny(request.uid, code, formatFieldError(CLUSTER_POD_DECORATION_KIND, name, forbiddenError(path, why))), result: "rejected" });
    try {
      const subject = subjectOf(request.userInfo);
      if (subject === undefined) return refuse(403, "the request names no user; a ClusterPodDecoration runs what it injects in the pods of every namespace it selects");
      const access = await checks.reviewAccess(subject, { namespace: "", verb: "create", group: "", resource: "pods" });
      if (!access.allowed) {
        return refuse(403, `${requesterName(request.userInfo)} may not create pods in every namespace${access.reason === undefined ? "" : ` (${access.reason})`}; a ClusterPodDecoration runs what it injects in the pods of every namespace it selects, so only who may create pods cluster-wide may write one`);
      }
      const selected = checks.namespacesInScope().filter((namespace) => selectorMatches(cpd.spec.namespaceSelector, namespace.labels));
      const key = decorationKey({ kind: CLUSTER_POD_DECORATION_KIND, metadata: cpd.metadata });
      const bounds = checks.bounds ?? DEFAULT_DECORATION_BOUNDS;
      for (const namespace of selected) {
        const view = asSeenFrom(cpd, namespace.name);
        const chain = longestSelectionChain([...checks.namespaceDecorations(namespace.name).filter((other) => decorationKey(other) !== key), view]);
        if (chain.length > bounds.maxSelectionRounds && chain.includes(view)) {
          const names = chain.map((decoration) => decorationKey(decoration)).join(" → ");
          return refuse(403, `in namespace ${namespace.name}, with the labels it sets or selects, the decorations select one another ${chain.length} deep (${names}); a pod is given ${bounds.maxSelectionRounds} rounds of selection (the webhook's --max-selection-rounds)`, "spec");
        }
      }
      const others = checks.clusterDecorations().filter((other) => (other.metadata.name ?? "") !== (cpd.metadata.name ?? "")).map((other) => asSeenFrom(other, ""));
      const outRanking = await outRankingRefusal(request, checks.reviewAccess, subject, outRankedDecorations(asSeenFrom(cpd, ""), others), CLUSTER_POD_DECORATION_KIND, name);
      if (outRanking !== undefined) return withWarningsOf(decision, outRanking);
      const refusals: string[] = [];
      const warnings: string[] = [];
      for (const namespace of selected) {
        const judged = namespaceStandards(cpd.spec.template ?? {}, namespace.name, namespace.labels, CLUSTER_POD_DECORATION_KIND, name);
        refusals.push(...judged.refusals);
        warnings.push(...judged.warnings);
      }
      if (refusals.length > 0) {
        const more = refusals.length > NAMED_AT_MOST ? `; and ${refusals.length - NAMED_AT_MOST} more` : "";
        return { response: deny(request.uid, 422, `${refusals.slice(0, NAMED_AT_MOST).join("; ")}${more}`), result: "rejected" };
      }
      const said = warnings.length > NAMED_AT_MOST ? [...warnings.slice(0, NAMED_AT_MOST), `ClusterPodDecoration/${name ?? ""}: and ${warnings.length - NAMED_AT_MOST} more Pod Security warnings in the namespaces it selects`] : warnings;
      return withWarningsOf(decision, { response: allow(request.uid, said), result: "allowed" });
    } catch (error) {
      // Fail closed: a decoration whose writer could not be checked is not stored.
      return { response: deny(request.uid, 500, formatFieldError(CLUSTER_POD_DECORATION_KIND, name, { path: "", reason: `could not be checked, try again: ${statusMessage(error)}` })), result: "error" };
    }
  };
}
