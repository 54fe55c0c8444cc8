import { describe, expect, it } from "vitest";
import type { PodDecoration } from "../../src/api/poddecoration.ts";
import type { DecorationSource } from "../../src/decoration/updated-revisions.ts";
import type { AdmissionRequest } from "../../src/webhook/admission-review.ts";
import { DecisionMemo, type DecisionMemoLimits } from "../../src/webhook/decision-memo.ts";
import { podMutation } from "../../src/webhook/pod-mutation.ts";
import { trustNobody } from "../../src/webhook/requester-trust.ts";
import type { AdmissionDecision } from "../../src/webhook/server.ts";
import { typicalDecorations } from "../bench/typical-workload.ts";
import { replica } from "./replica-fixture.ts";

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

/** The namespace's decorations as the cache holds them, no revisions stored. */
function cachedSource(decorations: () => readonly PodDecoration[]): DecorationSource {
  return { decorations: () => decorations(), revisionData: () => undefined };
}

const allowed = (uid: string, patch: string): AdmissionDecision => ({ response: { uid, allowed: true, patchType: "JSONPatch", patch }, result: "injected" });
const limits = (overrides: Partial<DecisionMemoLimits>): DecisionMemoLimits => ({ entries: 100, characters: 1_000_000, keyCharacters: 10_000, ...overrides });

describe("the pod webhook's memory of recent answers", () => {
  it("keeps the answer for a pod that comes a second time, and answers its next replica from it under the new request's uid", () => {
    const cached = [decoration("logging", "fluent-bit:3.0")];
    const source = cachedSource(() => cached);
    let remembered = 0;
    const handler = podMutation({ source, onDecorationError: "reject", trustRequester: trustNobody, onRemembered: () => remembered++ });
    const first = handler(request("u1"));
    const second = handler(request("u2"));
    expect(remembered).toBe(0);
    const third = handler(request("u3"));
    expect(first.result).toBe("injected");
    expect(second).toEqual({ ...first, response: { ...first.response, uid: "u2" } });
    expect(third).toEqual({ ...first, response: { ...first.response, uid: "u3" } });
    expect(remembered).toBe(1);
  });

  it("never keeps the answer for a pod that comes once, and remembers a bounded number of such pods", () => {
    const memo = new DecisionMemo({ decorations: () => [], revisionData: () => undefined }, limits({ entries: 2 }));
    const decisions: string[] = [];
    const decide = (key: string) => () => (decisions.push(key), allowed("u", key));
    // Two entries: eight pods seen once are remembered as seen, the ninth pushes out the first.
    const keys = Array.from({ length: 9 }, (_, index) => `pod-${index}`);
    for (const key of keys) memo.answer("u", "team-a", key, undefined, [], decide(key));
    expect(memo.size).toBe(0);
    memo.answer("u", "team-a", "pod-1", undefined, [], decide("pod-1")); // its second coming: kept
    memo.answer("u", "team-a", "pod-0", undefined, [], decide("pod-0")); // forgotten, so seen once again: not kept
    expect(memo.size).toBe(1);
    memo.answer("u", "team-a", "pod-1", undefined, [], decide("pod-1"));
    expect(decisions).toEqual([...keys, "pod-1", "pod-0"]);
  });

  it("renders again once a decoration is replaced in the cache, and never answers from the old one", () => {
    let current = [decoration("logging", "fluent-bit:3.0")];
    const source = cachedSource(() => current);
    const handler = podMutation({ source, onDecorationError: "reject", trustRequester: trustNobody });
    handler(request("u1"));
    expect(patchText(handler(request("u2")))).toContain("fluent-bit:3.0");
    current = [decoration("logging", "fluent-bit:3.1")];
    const after = patchText(handler(request("u3")));
    expect(after).toContain("fluent-bit:3.1");
    expect(after).not.toContain("fluent-bit:3.0");
  });

  it("renders again when the namespace gains a decoration", () => {
    let current = [decoration("logging", "fluent-bit:3.0")];
    const source = cachedSource(() => current);
    const handler = podMutation({ source, onDecorationError: "reject", trustRequester: trustNobody });
    handler(request("u1"));
    handler(request("u2"));
    current = [...current, decoration("mesh", "proxy:1.24")];
    expect(patchText(handler(request("u3")))).toContain("proxy:1.24");
  });

  it("tells pods apart by their whole object: a changed label is a different pod", () => {
    const source = cachedSource(() => [decoration("logging", "fluent-bit:3.0")]);
    const handler = podMutation({ source, onDecorationError: "reject", trustRequester: trustNobody });
    handler(request("u1"));
    expect(handler(request("u2")).response.patch).toBeDefined();
    const other = { ...structuredClone(pod), metadata: { generateName: "web-", labels: { app: "other" } } };
    expect(handler(request("u3", { object: other }))).toEqual({ response: { uid: "u3", allowed: true }, result: "skipped" });
  });

  it("names each requester in the warning about forged bookkeeping, though their pods are the same", () => {
    const source = cachedSource(() => [decoration("logging", "fluent-bit:3.0")]);
    const handler = podMutation({ source, onDecorationError: "reject", trustRequester: trustNobody });
    const forged = { ...structuredClone(pod), metadata: { generateName: "web-", labels: { app: "web", "poddecoration.kusionstack.io/pd-logging": "x" } } };
    handler(request("u1", { object: structuredClone(forged), userInfo: { username: "alice" } }));
    const fromAlice = handler(request("u2", { object: structuredClone(forged), userInfo: { username: "alice" } }));
    const fromBob = handler(request("u3", { object: structuredClone(forged), userInfo: { username: "bob" } }));
    expect(fromAlice.response.warnings?.[0]).toContain("alice");
    expect(fromBob.response.warnings?.[0]).toContain("bob");
  });

  it("answers a replica with its own token volume's name exactly as rendering it afresh would", () => {
    const decorations = Object.freeze(typicalDecorations().map((pd) => Object.freeze({ ...pd, metadata: { ...pd.metadata, namespace: "team-a" } })));
    const source: DecorationSource = { decorations: () => decorations, revisionData: () => undefined };
    let remembered = 0;
    const remembering = podMutation({ source, onDecorationError: "reject", trustRequester: trustNobody, onRemembered: () => remembered++ });
    const rendering = podMutation({ source, onDecorationError: "reject", trustRequester: trustNobody, memoLimits: limits({ entries: 0 }) });
    const pods = [replica("kube-api-access-7qm2x"), replica("kube-api-access-b4k9z", "2026-11-24T21:00:01Z"), replica("kube-api-access-zz2xx"), replica("kube-api-access-c5d6f")];
    for (const pod of pods) Object.assign(pod.metadata.labels, { tier: "frontend" });
    const answers = pods.map((pod, index) => remembering(request(`u${index}`, { object: structuredClone(pod) })));
    pods.forEach((pod, index) => expect(answers[index]).toEqual(rendering(request(`u${index}`, { object: structuredClone(pod) }))));
    expect(answers[0]!.result).toBe("injected");
    // The first two are rendered; the second's answer is kept and serves the others.
    expect(remembered).toBe(2);
  });

  it("writes the replica's own token volume name where the remembered answer had another's", () => {
    const memo = new DecisionMemo({ decorations: () => [], revisionData: () => undefined }, limits({}));
    let decided = 0;
    const decide = (name: string) => (): AdmissionDecision => {
      decided++;
      return { response: { uid: "u", allowed: true, patchType: "JSONPatch", patch: Buffer.from(`[{"op":"add","path":"/x","value":"${name}"}]`).toString("base64"), warnings: [`saw ${name}`] }, result: "injected" };
    };
    memo.answer("u1", "team-a", "pod\u0000", "kube-api-access-7qm2x", [], decide("kube-api-access-7qm2x"));
    memo.answer("u2", "team-a", "pod\u0000", "kube-api-access-b4k9z", [], decide("kube-api-access-b4k9z"));
    const third = memo.answer("u3", "team-a", "pod\u0000", "kube-api-access-zz2xx", [], decide("kube-api-access-zz2xx"));
    expect(decided).toBe(2);
    expect(Buffer.from(third.response.patch ?? "", "base64").toString()).toBe('[{"op":"add","path":"/x","value":"kube-api-access-zz2xx"}]');
    expect(third.response.warnings).toEqual(["saw kube-api-access-zz2xx"]);
  });

  it("does not stand a token volume's name for others' when a decoration or the answer mentions such names", () => {
    const mentioning = decoration("logging", "fluent-bit:3.0");
    const withVolume = Object.freeze({ ...mentioning, spec: { ...mentioning.spec, template: { volumes: [{ name: "kube-api-access-aaaaa", emptyDir: {} }] } } });
    const memo = new DecisionMemo({ decorations: () => [], revisionData: () => undefined }, limits({}));
    let decided = 0;
    const decide = (value: string) => (): AdmissionDecision => (decided++, allowed("u", Buffer.from(`"${value}"`).toString("base64")));
    for (const name of ["kube-api-access-7qm2x", "kube-api-access-b4k9z", "kube-api-access-zz2xx"]) memo.answer("u", "team-a", "a", name, [withVolume], decide("x"));
    expect(decided).toBe(3);
    for (const name of ["kube-api-access-7qm2x", "kube-api-access-b4k9z", "kube-api-access-zz2xx"]) memo.answer("u", "team-a", "b", name, [], decide("kube-api-access-ccccc"));
    expect(decided).toBe(6);
    expect(memo.size).toBe(0);
  });

  it("decides again when revision data an answer was rendered from has changed", () => {
    const data = new Map<string, unknown>([["team-a/logging-1", { version: 1 }]]);
    const memo = new DecisionMemo({ decorations: () => [], revisionData: (namespace, name) => data.get(`${namespace}/${name}`) }, limits({}));
    let decided = 0;
    const decide = () => {
      decided++;
      return allowed("u", JSON.stringify(memo.source.revisionData("team-a", "logging-1")));
    };
    memo.answer("u1", "team-a", "pod", undefined, [], decide);
    expect(memo.answer("u2", "team-a", "pod", undefined, [], decide).response.patch).toBe('{"version":1}');
    expect(memo.answer("u3", "team-a", "pod", undefined, [], decide)).toEqual(allowed("u3", '{"version":1}'));
    expect(decided).toBe(2);
    data.set("team-a/logging-1", { version: 2 });
    expect(memo.answer("u4", "team-a", "pod", undefined, [], decide).response.patch).toBe('{"version":2}');
    expect(decided).toBe(3);
  });

  it("forgets a namespace's answers at once when its decorations change, and only that namespace's", () => {
    const memo = new DecisionMemo(cachedSource(() => []), limits({}));
    const v1 = [decoration("logging", "fluent-bit:3.0")];
    const v2 = [decoration("logging", "fluent-bit:3.1")];
    const decide = () => allowed("u", "p");
    for (const [namespace, key] of [["team-a", "a/pod-1"], ["team-a", "a/pod-2"], ["team-b", "b/pod-1"]] as const) {
      memo.answer("u", namespace, key, undefined, v1, decide);
      memo.answer("u", namespace, key, undefined, v1, decide);
    }
    expect(memo.size).toBe(3);
    // A pod of another template in team-a, after its decoration changed: the two older answers go with the old list.
    memo.answer("u4", "team-a", "a/pod-3", undefined, v2, decide);
    memo.answer("u4", "team-a", "a/pod-3", undefined, v2, decide);
    expect(memo.size).toBe(2);
    let decided = 0;
    memo.answer("u5", "team-b", "b/pod-1", undefined, v1, () => (decided++, decide()));
    expect(decided).toBe(0);
  });

  it("does not remember errors: an internal error may not repeat", () => {
    const memo = new DecisionMemo({ decorations: () => [], revisionData: () => undefined }, limits({}));
    let decided = 0;
    const failing = (): AdmissionDecision => (decided++, { response: { uid: "u", allowed: true, warnings: ["internal error"] }, result: "error" });
    for (const uid of ["u1", "u2", "u3"]) memo.answer(uid, "team-a", "pod", undefined, [], failing);
    expect(decided).toBe(3);
    expect(memo.size).toBe(0);
  });

  it("keeps at most its number of entries, forgetting the least recently used first", () => {
    const memo = new DecisionMemo({ decorations: () => [], revisionData: () => undefined }, limits({ entries: 2 }));
    const decisions: string[] = [];
    const decide = (key: string) => () => (decisions.push(key), allowed("u", key));
    const twice = (key: string) => [1, 2].forEach(() => memo.answer("u", "team-a", key, undefined, [], decide(key)));
    twice("a");
    twice("b");
    memo.answer("u", "team-a", "a", undefined, [], decide("a")); // a is now the most recently used
    twice("c"); // b goes
    memo.answer("u", "team-a", "a", undefined, [], decide("a"));
    memo.answer("u", "team-a", "b", undefined, [], decide("b"));
    expect(decisions).toEqual(["a", "a", "b", "b", "c", "c", "b"]);
    expect(memo.size).toBe(2);
  });

  it("keeps at most its number of characters, and never remembers a pod beyond the key limit", () => {
    const memo = new DecisionMemo({ decorations: () => [], revisionData: () => undefined }, limits({ characters: 250, keyCharacters: 100 }));
    let decided = 0;
    const decide = () => (decided++, allowed("u", "p".repeat(50)));
    for (const key of ["k".repeat(60), "l".repeat(60), "m".repeat(60)]) [1, 2].forEach(() => memo.answer("u", "team-a", key, undefined, [], decide));
    expect(memo.size).toBe(2); // 3 × 94 characters (a 44-character digest and the patch) do not fit in 250
    const long = "x".repeat(101);
    for (const uid of ["u1", "u2", "u3"]) memo.answer(uid, "team-a", long, undefined, [], decide);
    expect(decided).toBe(9);
    expect(memo.size).toBe(2);
  });
});
