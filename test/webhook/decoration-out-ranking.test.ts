// PodDecoration admission refuses a decoration that would out-rank another (exclude it from its
// group, or override what it renders) unless a SubjectAccessReview says its writer may update
// that other decoration; the SubjectAccessReview is the function the webhook is given.
import { describe, expect, it } from "vitest";
import type { AccessDecision, ResourceAction, Subject } from "../../src/kube/access-review.ts";
import type { PodDecoration } from "../../src/api/poddecoration.ts";
import type { AdmissionRequest } from "../../src/webhook/admission-review.ts";
import { withPrivilegeChecks } from "../../src/webhook/decoration-privilege.ts";
import { validatePodDecorations } from "../../src/webhook/resource-admission.ts";

const NAMESPACE = "team-a";
const JANE = { username: "jane", uid: "j-1", groups: ["developers", "system:authenticated"], extra: { scopes: ["a"] } };

function decoration(name: string, spec: object, created?: string): PodDecoration {
  return {
    apiVersion: "apps.kusionstack.io/v1alpha1",
    kind: "PodDecoration",
    metadata: { name, namespace: NAMESPACE, ...(created === undefined ? {} : { creationTimestamp: created }) },
    spec: { selector: {}, ...spec },
  };
}

/** The platform's mandatory decoration: every pod of the namespace gets its mesh proxy. */
const platform = decoration("platform", { injectStrategy: { group: "mesh", weight: 5 }, template: { containers: [{ name: "mesh-proxy", image: "mesh/proxy:1" }] } }, "2026-01-01T00:00:00Z");
const logging = decoration("logging", { template: { containers: [{ name: "log-shipper", image: "logs:1" }] } }, "2026-01-01T00:00:00Z");
const heavier = decoration("mine", { injectStrategy: { group: "mesh", weight: 10 }, template: {} });
const takeover = decoration("mine", { injectStrategy: { group: "zz-overrides" }, template: { containers: [{ name: "mesh-proxy", image: "evil:1" }, { name: "log-shipper", image: "evil:1" }] } });
const harmless = decoration("mine", { template: { containers: [{ name: "metrics", image: "metrics:1" }] } });

function request(object: PodDecoration, overrides: Partial<AdmissionRequest> = {}): AdmissionRequest {
  return {
    uid: "u",
    kind: { group: "apps.kusionstack.io", version: "v1alpha1", kind: "PodDecoration" },
    operation: "CREATE",
    namespace: NAMESPACE,
    name: "mine",
    userInfo: JANE,
    object,
    ...overrides,
  };
}

/** A namespace holding `cached`, where the requester may create pods and update only `mayUpdate`. */
function world(cached: PodDecoration[], options: { mayUpdate?: string[]; failUpdateReviews?: boolean } = {}) {
  const updateReviews: [Subject, ResourceAction][] = [];
  const listed: string[] = [];
  const handler = withPrivilegeChecks(validatePodDecorations, {
    reviewAccess: (subject, action): Promise<AccessDecision> => {
      if (action.verb === "create") return Promise.resolve({ allowed: true });
      if (options.failUpdateReviews === true) return Promise.reject(new Error("connection refused"));
      updateReviews.push([subject, action]);
      return Promise.resolve({ allowed: (options.mayUpdate ?? []).includes(action.name ?? "") });
    },
    decorations: (namespace) => {
      listed.push(namespace);
      return cached.filter((pd) => pd.metadata.namespace === namespace);
    },
    namespaceLabels: () => Promise.resolve({}),
  });
  return { handler, updateReviews, listed };
}

const updateOf = (name: string): ResourceAction => ({ namespace: NAMESPACE, verb: "update", group: "apps.kusionstack.io", resource: "poddecorations", name });

describe("PodDecoration admission: out-ranking another decoration", () => {
  it("refuses a heavier decoration in the platform's group to who may not update the platform's, naming it and why", async () => {
    const { handler, updateReviews, listed } = world([platform, logging]);
    const decision = await handler(request(heavier));
    expect(decision.result).toBe("rejected");
    expect(decision.response.status).toEqual({
      code: 403,
      reason: "Forbidden",
      message: 'PodDecoration/mine: Forbidden: would exclude team-a/platform (same group "mesh", heavier weight 10 > 5) — out-ranking a PodDecoration requires update on it, and jane may not update team-a/platform',
    });
    // Asked as the requester, about that one decoration by name.
    expect(updateReviews).toEqual([[JANE, updateOf("platform")]]);
    expect(listed).toEqual([NAMESPACE]);
  });

  it("admits the same decoration to who may update the platform's", async () => {
    const { handler, updateReviews } = world([platform, logging], { mayUpdate: ["platform"] });
    expect((await handler(request(heavier))).response).toEqual({ uid: "u", allowed: true });
    expect(updateReviews).toEqual([[JANE, updateOf("platform")]]);
  });

  it("names only the decorations the writer may not update, each with its reasons", async () => {
    const refused = await world([platform, logging], { mayUpdate: ["logging"] }).handler(request(takeover));
    expect(refused.response.status?.message).toBe(
      'PodDecoration/mine: Forbidden: would replace container "mesh-proxy" that team-a/platform injects — out-ranking a PodDecoration requires update on it, and jane may not update team-a/platform',
    );
    const both = await world([platform, logging]).handler(request(takeover));
    expect(both.response.status?.message).toBe(
      'PodDecoration/mine: Forbidden: would replace container "mesh-proxy" that team-a/platform injects; would replace container "log-shipper" that team-a/logging injects — out-ranking a PodDecoration requires update on it, and jane may not update team-a/platform, team-a/logging',
    );
  });

  it("admits a decoration that touches nothing of another's without asking about them", async () => {
    const { handler, updateReviews } = world([platform, logging]);
    expect((await handler(request(harmless))).response).toEqual({ uid: "u", allowed: true });
    expect(updateReviews).toEqual([]);
  });

  it("admits a decoration out-ranking only decorations of pods it cannot select", async () => {
    const onlyB = decoration("platform", { ...platform.spec, selector: { matchLabels: { app: "b" } } }, "2026-01-01T00:00:00Z");
    const onlyA = decoration("mine", { ...heavier.spec, selector: { matchLabels: { app: "a" } } });
    const { handler, updateReviews } = world([onlyB]);
    expect((await handler(request(onlyA))).response.allowed).toBe(true);
    expect(updateReviews).toEqual([]);
  });

  it("refuses an update that edits a decoration into out-ranking the platform's, not one that leaves the spec alone", async () => {
    const stored = { ...harmless, metadata: { ...harmless.metadata, creationTimestamp: "2026-03-01T00:00:00Z" } };
    const edited = { ...stored, spec: takeover.spec };
    // The cache holds the decoration's stored version too: it is not out-ranked by itself.
    const { handler } = world([platform, stored]);
    const decision = await handler(request(edited, { operation: "UPDATE", oldObject: stored }));
    expect(decision.response.status?.message).toBe(
      'PodDecoration/mine: Forbidden: would replace container "mesh-proxy" that team-a/platform injects — out-ranking a PodDecoration requires update on it, and jane may not update team-a/platform',
    );
    // Already out-ranking (admitted while its writer had the right): a finalizer is no new position.
    const withFinalizer = { ...edited, metadata: { ...edited.metadata, finalizers: ["poddecoration.kusionstack.io/protection"] } };
    expect((await handler(request(withFinalizer, { operation: "UPDATE", oldObject: edited }))).response.allowed).toBe(true);
  });

  it("refuses when the writer's right cannot be checked, rather than store the decoration unchecked", async () => {
    const decision = await world([platform], { failUpdateReviews: true }).handler(request(heavier));
    expect(decision.response.allowed).toBe(false);
    expect(decision.response.status?.code).toBe(500);
    expect(decision.response.status?.message).toBe("PodDecoration/mine: could not be checked, try again: connection refused");
  });
});
