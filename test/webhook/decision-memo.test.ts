import { describe, expect, it } from "vitest";
import type { PodDecoration } from "../../src/api/poddecoration.ts";
import type { DecorationSource } from "../../src/decoration/updated-revisions.ts";
import type { AdmissionRequest } from "../../src/webhook/admission-review.ts";
import { DecisionMemo, type DecisionMemoLimits } from "../../src/webhook/decision-memo.ts";
import { podMutation } from "../../src/webhook/pod-mutation.ts";
import { trustNobody } from "../../src/webhook/requester-trust.ts";
import type { AdmissionDecision } from "../../src/webhook/server.ts";

function decoration(name: string, image: string): PodDecoration {
  return Object.freeze({
    apiVersion: "apps.kusionstack.io/v1alpha1",
    kind: "PodDecoration",
    metadata: { name, namespace: "team-a", uid: `uid-${name}`, creationTimestamp: "2026-01-01T00:00:00Z" },
    spec: { selector: { matchLabels: { app: "web" } }, template: { containers: [{ name: `${name}-sidecar`, image }] } },
  });
}

const pod = { apiVersion: "v1", kind: "Pod", metadata: { generateName: "web-", labels: { app: "web" } }, spec: { containers: [{ name: "app", image: "web:1" }] } };

function request(uid: string, overrides: Partial<AdmissionRequest> = {}): AdmissionRequest {
  return { uid, kind: { group: "", version: "v1", kind: "Pod" }, operation: "CREATE", namespace: "team-a", object: structuredClone(pod), ...overrides };
}

function patchText(decision: AdmissionDecision): string {
  return Buffer.from(decision.response.patch ?? "", "base64").toString();
}

/** A source that counts how often rendering asked for revision data: once per decoration per render here. */
function countingSource(decorations: () => readonly PodDecoration[]) {
  const counts = { revisionReads: 0 };
  const source: DecorationSource = {
    decorations: () => decorations(),
    revisionData: () => {
      counts.revisionReads++;
      return undefined;
    },
  };
  return { source, counts };
}

const allowed = (uid: string, patch: string): AdmissionDecision => ({ response: { uid, allowed: true, patchType: "JSONPatch", patch }, result: "injected" });
const limits = (overrides: Partial<DecisionMemoLimits>): DecisionMemoLimits => ({ entries: 100, characters: 1_000_000, keyCharacters: 10_000, ...overrides });

describe("the pod webhook's memory of recent answers", () => {
  it("answers a replica of a pod it has just decorated with the same patch under the new request's uid", () => {
    const { source } = countingSource(() => [decoration("logging", "fluent-bit:3.0")]);
    const handler = podMutation({ source, onDecorationError: "reject", trustRequester: trustNobody });
    const first = handler(request("u1"));
    const second = handler(request("u2"));
    expect(first.result).toBe("injected");
    expect(second).toEqual({ ...first, response: { ...first.response, uid: "u2" } });
  });

  it("renders again once a decoration is replaced in the cache, and never answers from the old one", () => {
    let current = [decoration("logging", "fluent-bit:3.0")];
    const { source } = countingSource(() => current);
    const handler = podMutation({ source, onDecorationError: "reject", trustRequester: trustNobody });
    expect(patchText(handler(request("u1")))).toContain("fluent-bit:3.0");
    current = [decoration("logging", "fluent-bit:3.1")];
    const after = patchText(handler(request("u2")));
    expect(after).toContain("fluent-bit:3.1");
    expect(after).not.toContain("fluent-bit:3.0");
  });

  it("renders again when the namespace gains a decoration", () => {
    let current = [decoration("logging", "fluent-bit:3.0")];
    const { source } = countingSource(() => current);
    const handler = podMutation({ source, onDecorationError: "reject", trustRequester: trustNobody });
    handler(request("u1"));
    current = [...current, decoration("mesh", "proxy:1.24")];
    expect(patchText(handler(request("u2")))).toContain("proxy:1.24");
  });

  it("tells pods apart by their whole object: a changed label is a different pod", () => {
    const { source } = countingSource(() => [decoration("logging", "fluent-bit:3.0")]);
    const handler = podMutation({ source, onDecorationError: "reject", trustRequester: trustNobody });
    expect(handler(request("u1")).response.patch).toBeDefined();
    const other = { ...structuredClone(pod), metadata: { generateName: "web-", labels: { app: "other" } } };
    expect(handler(request("u2", { object: other }))).toEqual({ response: { uid: "u2", allowed: true }, result: "skipped" });
  });

  it("names each requester in the warning about forged bookkeeping, though their pods are the same", () => {
    const { source } = countingSource(() => [decoration("logging", "fluent-bit:3.0")]);
    const handler = podMutation({ source, onDecorationError: "reject", trustRequester: trustNobody });
    const forged = { ...structuredClone(pod), metadata: { generateName: "web-", labels: { app: "web", "poddecoration.kusionstack.io/pd-logging": "x" } } };
    const fromAlice = handler(request("u1", { object: structuredClone(forged), userInfo: { username: "alice" } }));
    const fromBob = handler(request("u2", { object: structuredClone(forged), userInfo: { username: "bob" } }));
    expect(fromAlice.response.warnings?.[0]).toContain("alice");
    expect(fromBob.response.warnings?.[0]).toContain("bob");
  });

  it("decides again when revision data an answer was rendered from has changed", () => {
    const data = new Map<string, unknown>([["team-a/logging-1", { version: 1 }]]);
    const memo = new DecisionMemo({ decorations: () => [], revisionData: (namespace, name) => data.get(`${namespace}/${name}`) }, limits({}));
    let decided = 0;
    const decide = () => {
      decided++;
      return allowed("u", JSON.stringify(memo.source.revisionData("team-a", "logging-1")));
    };
    expect(memo.answer("u1", "pod", [], decide).response.patch).toBe('{"version":1}');
    expect(memo.answer("u2", "pod", [], decide)).toEqual(allowed("u2", '{"version":1}'));
    expect(decided).toBe(1);
    data.set("team-a/logging-1", { version: 2 });
    expect(memo.answer("u3", "pod", [], decide).response.patch).toBe('{"version":2}');
    expect(decided).toBe(2);
  });

  it("does not remember errors: an internal error may not repeat", () => {
    const memo = new DecisionMemo({ decorations: () => [], revisionData: () => undefined }, limits({}));
    let decided = 0;
    const failing = (): AdmissionDecision => (decided++, { response: { uid: "u", allowed: true, warnings: ["internal error"] }, result: "error" });
    memo.answer("u1", "pod", [], failing);
    memo.answer("u2", "pod", [], failing);
    expect(decided).toBe(2);
    expect(memo.size).toBe(0);
  });

  it("keeps at most its number of entries, forgetting the least recently used first", () => {
    const memo = new DecisionMemo({ decorations: () => [], revisionData: () => undefined }, limits({ entries: 2 }));
    const decisions: string[] = [];
    const decide = (key: string) => () => (decisions.push(key), allowed("u", key));
    memo.answer("u", "a", [], decide("a"));
    memo.answer("u", "b", [], decide("b"));
    memo.answer("u", "a", [], decide("a")); // a is now the most recently used
    memo.answer("u", "c", [], decide("c")); // b goes
    memo.answer("u", "a", [], decide("a"));
    memo.answer("u", "b", [], decide("b"));
    expect(decisions).toEqual(["a", "b", "c", "b"]);
    expect(memo.size).toBe(2);
  });

  it("keeps at most its number of characters, and never remembers a pod beyond the key limit", () => {
    const memo = new DecisionMemo({ decorations: () => [], revisionData: () => undefined }, limits({ characters: 250, keyCharacters: 100 }));
    let decided = 0;
    const decide = () => (decided++, allowed("u", "p".repeat(50)));
    for (const key of ["k".repeat(60), "l".repeat(60), "m".repeat(60)]) memo.answer("u", key, [], decide);
    expect(memo.size).toBe(2); // 3 × 110 characters do not fit in 250
    const long = "x".repeat(101);
    memo.answer("u", long, [], decide);
    memo.answer("u", long, [], decide);
    expect(decided).toBe(5);
    expect(memo.size).toBe(2);
  });
});
