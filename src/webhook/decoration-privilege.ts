// What writing a PodDecoration is allowed to mean (DESIGN §10): a decoration runs what it
// injects in every pod it selects, so whoever writes one must be allowed to create those pods
// themselves (a SubjectAccessReview: create pods in the namespace); a decoration that would
// out-rank another (exclude it from its group, or override what it renders) needs the right to
// update that other one; and the template must keep the pods admissible under the namespace's
// Pod Security Standards. Checked when the spec is created or changed; an update that leaves
// the spec alone (a finalizer, labels) is not checked.
import { formatFieldError, forbiddenError } from "../api/field-errors.ts";
import { GROUP, POD_DECORATION_KIND } from "../api/group.ts";
import { withoutNullFields } from "../api/null-fields.ts";
import type { PodDecoration } from "../api/poddecoration.ts";
import { outRankedDecorations } from "../decoration/out-ranking.ts";
import type { AccessReviewer, Subject } from "../kube/access-review.ts";
import { statusMessage } from "../kube/errors.ts";
import { allow, deny, type AdmissionRequest } from "./admission-review.ts";
import { namespacePolicy, templateViolations, type PodSecurityPolicy, type TemplateViolation } from "./pod-security-standards.ts";
import { requesterName, type UserInfo } from "./requester-trust.ts";
import type { AdmissionDecision, AdmissionHandler, SynchronousAdmissionHandler } from "./server.ts";

export interface PrivilegeChecks {
  reviewAccess: AccessReviewer;
  /** The namespace's PodDecorations, as the webhook's cache holds them. */
  decorations(namespace: string): readonly PodDecoration[];
  /** The namespace's labels, or undefined when it does not exist. */
  namespaceLabels(namespace: string): Promise<Readonly<Record<string, string>> | undefined>;
}

/** The structural validation, then, for a new or changed spec, the requester's right and the namespace's standards. */
export function withPrivilegeChecks(structural: SynchronousAdmissionHandler, checks: PrivilegeChecks): AdmissionHandler {
  return async (request) => {
    const decision = structural(request);
    if (!decision.response.allowed || !changesSpec(request)) return decision;
    const pd = request.object as PodDecoration;
    const name = pd.metadata.name ?? pd.metadata.generateName ?? request.name;
    const namespace = request.namespace ?? pd.metadata.namespace ?? "default";
    try {
      const checked =
        (await accessDecision(request, checks, name, namespace)) ??
        (await outRankingDecision(request, checks, pd, name, namespace)) ??
        (await standardsDecision(request, checks, pd, name, namespace));
      return withWarningsOf(decision, checked);
    } catch (error) {
      // Fail closed: a decoration whose writer could not be checked is not stored.
      return { response: deny(request.uid, 500, `${formatFieldError(POD_DECORATION_KIND, name, { path: "", reason: `could not be checked, try again: ${statusMessage(error)}` })}`), result: "error" };
    }
  };
}

/** The checks' decision, still carrying the structural validation's warnings. */
function withWarningsOf(structural: AdmissionDecision, checked: AdmissionDecision): AdmissionDecision {
  const warnings = [...(structural.response.warnings ?? []), ...(checked.response.warnings ?? [])];
  return warnings.length === 0 ? checked : { ...checked, response: { ...checked.response, warnings } };
}

/** Whether a request creates a PodDecoration or changes its spec (a finalizer or label change does not). */
export function changesSpec(request: AdmissionRequest): boolean {
  if (request.kind.kind !== POD_DECORATION_KIND || request.object == null) return false;
  if (request.operation === "CREATE") return true;
  if (request.operation !== "UPDATE") return false;
  return JSON.stringify(canonical((request.object as { spec?: unknown }).spec)) !== JSON.stringify(canonical((request.oldObject as { spec?: unknown } | null | undefined)?.spec));
}

function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (typeof value !== "object" || value === null) return value;
  return Object.fromEntries(Object.keys(value).sort().map((key) => [key, canonical((value as Record<string, unknown>)[key])]));
}

function subjectOf(userInfo: UserInfo | undefined): Subject | undefined {
  if (typeof userInfo?.username !== "string" || userInfo.username === "") return undefined;
  const groups = Array.isArray(userInfo.groups) ? userInfo.groups.filter((group): group is string => typeof group === "string") : undefined;
  const extra = typeof userInfo.extra === "object" && userInfo.extra !== null
    ? Object.fromEntries(Object.entries(userInfo.extra as Record<string, unknown>).map(([key, values]) => [key, Array.isArray(values) ? values.filter((value): value is string => typeof value === "string") : []]))
    : undefined;
  return {
    username: userInfo.username,
    ...(typeof userInfo.uid === "string" && userInfo.uid !== "" ? { uid: userInfo.uid } : {}),
    ...(groups === undefined ? {} : { groups }),
    ...(extra === undefined ? {} : { extra }),
  };
}

async function accessDecision(request: AdmissionRequest, checks: PrivilegeChecks, name: string | undefined, namespace: string): Promise<AdmissionDecision | undefined> {
  const subject = subjectOf(request.userInfo);
  const refuse = (why: string) => ({
    response: deny(request.uid, 403, formatFieldError(POD_DECORATION_KIND, name, forbiddenError("", `${why}; a PodDecoration runs what it injects in every pod it selects, so only who may create pods in namespace ${namespace} may write one`))),
    result: "rejected" as const,
  });
  if (subject === undefined) return refuse("the request names no user");
  const access = await checks.reviewAccess(subject, { namespace, verb: "create", group: "", resource: "pods" });
  if (access.allowed) return undefined;
  return refuse(`${requesterName(request.userInfo)} may not create pods in namespace ${namespace}${access.reason === undefined ? "" : ` (${access.reason})`}`);
}

/**
 * Refuses a decoration that would out-rank another its writer may not update, naming each one
 * and how. The namespace's decorations come from the webhook's cache, which a decoration
 * written an instant before may not have reached yet.
 */
async function outRankingDecision(request: AdmissionRequest, checks: PrivilegeChecks, pd: PodDecoration, name: string | undefined, namespace: string): Promise<AdmissionDecision | undefined> {
  const subject = subjectOf(request.userInfo);
  if (subject === undefined) return undefined; // refused by accessDecision already
  const candidate = withoutNullFields({ ...pd, metadata: { ...pd.metadata, namespace } });
  const outRanked = outRankedDecorations(candidate, checks.decorations(namespace));
  if (outRanked.length === 0) return undefined;
  const answers = await Promise.all(outRanked.map(({ decoration }) => checks.reviewAccess(subject, { namespace, verb: "update", group: GROUP, resource: "poddecorations", name: decoration.metadata.name ?? "" })));
  const refused = outRanked.filter((_, index) => !answers[index]!.allowed);
  if (refused.length === 0) return undefined;
  const reasons = refused.flatMap((entry) => entry.reasons).join("; ");
  const names = refused.map((entry) => `${namespace}/${entry.decoration.metadata.name ?? ""}`).join(", ");
  const why = `${reasons} — out-ranking a PodDecoration requires update on it, and ${requesterName(request.userInfo)} may not update ${names}`;
  return { response: deny(request.uid, 403, formatFieldError(POD_DECORATION_KIND, name, forbiddenError("", why))), result: "rejected" };
}

async function standardsDecision(request: AdmissionRequest, checks: PrivilegeChecks, pd: PodDecoration, name: string | undefined, namespace: string): Promise<AdmissionDecision> {
  const labels = await checks.namespaceLabels(namespace);
  const template = pd.spec.template ?? {};
  const enforce = labels === undefined ? undefined : namespacePolicy(labels, "enforce");
  const warn = labels === undefined ? undefined : namespacePolicy(labels, "warn");
  const enforced = enforce === undefined ? [] : templateViolations(template, enforce);
  const describe = (policy: PodSecurityPolicy, violation: TemplateViolation) => `pods in namespace ${namespace} would violate PodSecurity "${policy.label}": ${violation.rule} (${violation.detail})`;
  const refusals = enforced.filter((violation) => violation.definite);
  if (enforce !== undefined && refusals.length > 0) {
    const message = refusals.map((violation) => formatFieldError(POD_DECORATION_KIND, name, forbiddenError(violation.path, describe(enforce, violation)))).join("; ");
    return { response: deny(request.uid, 422, message), result: "rejected" };
  }
  const warnings = [
    // What the selected pods' own settings decide: they are refused unless they satisfy it.
    ...(enforce === undefined ? [] : enforced.map((violation) => formatFieldError(POD_DECORATION_KIND, name, { path: violation.path, reason: describe(enforce, violation) }))),
    ...(warn === undefined ? [] : templateViolations(template, warn).map((violation) => formatFieldError(POD_DECORATION_KIND, name, { path: violation.path, reason: `pods in namespace ${namespace} would get a warning from PodSecurity "${warn.label}": ${violation.rule} (${violation.detail})` }))),
  ];
  return { response: allow(request.uid, warnings), result: "allowed" };
}
