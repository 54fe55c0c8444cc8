// DESIGN §10 "No input stalls the event loop": every parser and pattern that user input reaches
// runs in linear time. Each entry point gets strings near the API server's 3 MiB body limit,
// crafted against the pattern it once used (long digit runs for quantities, long runs of what a
// star may take before a character that fails the match, …), and must stay within a CPU budget
// counted in linear scans of such a string, measured in the same run (a slow or busy machine
// raises both): a quadratic algorithm on strings this long takes minutes, a linear one milliseconds.
import { pino } from "pino";
import { Registry } from "prom-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { normalizedImageReference } from "../../src/api/image-reference.ts";
import { parseLabelSelector } from "../../src/api/label-selector.ts";
import { resolveMaxUnavailable, validateMaxUnavailable } from "../../src/api/max-unavailable.ts";
import { dns1123LabelErrors, dns1123SubdomainErrors, labelValueErrors, qualifiedNameErrors } from "../../src/api/names.ts";
import { type PodDecoration, validatePodDecoration } from "../../src/api/poddecoration.ts";
import { parseQuantity } from "../../src/api/quantity.ts";
import type { DecorationSource } from "../../src/decoration/updated-revisions.ts";
import { withoutTrailingSlashes } from "../../src/kube/base-url.ts";
import { boundedLabelValue } from "../../src/revision/name.ts";
import { admissionHandlers } from "../../src/webhook/admission-handlers.ts";
import { goDurationMs } from "../../src/webhook/admission-limits.ts";
import { parseJsonBody } from "../../src/webhook/json-body.ts";
import { createWebhookMetrics } from "../../src/webhook/metrics.ts";
import { trustNobody } from "../../src/webhook/requester-trust.ts";
import { createWebhookServer, DEFAULT_BODY_LIMIT_BYTES, type WebhookServer } from "../../src/webhook/server.ts";

/** Room left in a 3 MiB body for the AdmissionReview around the attacking value. */
const LONG = DEFAULT_BODY_LIMIT_BYTES - 64 * 1024;

/**
 * One parser call on a 3 MiB string may cost this many linear scans of such a string by the
 * regular expression engine (`linearScanMs`, measured in the same run, so a slow or busy machine
 * raises both): the parsers here take 2-3 scans, while the former quantity pattern took seconds
 * for 40,000 digits and hours for 3 million, a million scans and more.
 */
const PARSER_BUDGET_SCANS = 12;

/**
 * One whole admission request of 3 MiB, through the server, in linear scans of a 3 MiB string:
 * receiving and parsing the body, the structural walks of validation (nesting, null fields,
 * schema) and the answer take 10-60 scans here (the most, a PodDecoration whose matchLabelKeys
 * are long lists: ~270 ms, 30-55 scans), while anything quadratic in the body's length costs
 * minutes.
 */
const REQUEST_BUDGET_SCANS = 100;

/** CPU time (user + system) of the process while `run` runs: time spent waiting is not counted. */
function cpuMs(run: () => unknown): number {
  const start = process.cpuUsage();
  run();
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1000;
}

async function cpuMsAsync(run: () => Promise<unknown>): Promise<number> {
  const start = process.cpuUsage();
  await run();
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1000;
}

/**
 * CPU time of one linear pass over a 3 MiB string (a character class run to a character that
 * fails it, which no engine can skip), the least of five: this machine's speed right now.
 */
function linearScanMs(): number {
  const text = run("a-", "_");
  const pattern = /^[-a-z0-9]*$/;
  return Math.min(...Array.from({ length: 5 }, () => cpuMs(() => pattern.test(text))));
}

/** `unit` repeated to about `length` characters, then `tail`: a long run the pattern accepts, and a character that fails it. */
function run(unit: string, tail: string, length = LONG): string {
  return unit.repeat(Math.floor(length / unit.length)) + tail;
}

const podDecoration = (template: Record<string, unknown>) => ({
  apiVersion: "apps.kusionstack.io/v1alpha1",
  kind: "PodDecoration",
  metadata: { name: "attack", namespace: "team-a" },
  spec: { selector: { matchLabels: { app: "web" } }, template },
});

describe("the parsers user input reaches, on 3 MiB strings", () => {
  const cases: [string, () => unknown][] = [
    // The length issue 29 reproduced the stall with: the former pattern took seconds on it.
    ["a quantity of 60,000 digits and a bad suffix", () => parseQuantity(run("1", "x", 60_000))],
    ["a quantity of digits and a bad suffix", () => parseQuantity(run("1", "x"))],
    ["a quantity with a long fraction", () => parseQuantity(`1.${run("1", "x")}`)],
    ["a quantity of a dot and digits", () => parseQuantity(`.${run("1", "x")}`)],
    ["a quantity with a long exponent", () => parseQuantity(`1e${run("1", "x")}`)],
    ["a DNS-1123 label of letters", () => dns1123LabelErrors(run("a", "_"))],
    ["a DNS-1123 label of letters and hyphens", () => dns1123LabelErrors(run("a-", "_"))],
    ["a DNS-1123 subdomain of labels", () => dns1123SubdomainErrors(run("a.", "_"))],
    ["a DNS-1123 subdomain of hyphenated labels", () => dns1123SubdomainErrors(run("a-a.", "-"))],
    ["a qualified name", () => qualifiedNameErrors(run("a.", "-"))],
    ["a qualified name with a long prefix", () => qualifiedNameErrors(`${run("a.", "-")}/name`)],
    ["a label value", () => labelValueErrors(run("a.", "-"))],
    ["a label selector's key", () => parseLabelSelector({ matchLabels: { [run("a-", "_")]: "web" } })],
    ["a label selector's value", () => parseLabelSelector({ matchExpressions: [{ key: "app", operator: "In", values: [run("a.", "-")] }] })],
    ["a maxUnavailable percentage", () => validateMaxUnavailable(run("1", "x%"), "spec.maxUnavailable")],
    ["a maxUnavailable percentage, resolved", () => resolveMaxUnavailable(run("1", "x%"), 10)],
    ["an image reference", () => normalizedImageReference(run("a/", ":"))],
    ["a label value cut to 63 characters", () => boundedLabelValue(run("-", "a"))],
    ["a server URL with trailing slashes", () => withoutTrailingSlashes(run("/", "x"))],
    ["a Go duration of digits", () => goDurationMs(run("1", "x"))],
    ["a Go duration with a long fraction", () => goDurationMs(`1.${run("1", "x")}`)],
    ["a downward API field path", () => validatePodDecoration(podDecoration({ containers: [{ name: "s", image: "s:1", env: [{ name: "V", valueFrom: { fieldRef: { fieldPath: `metadata.labels['${run("']", "x")}` } } }] }] }))],
  ];

  it.each(cases)("reads %s within the CPU budget", (_name, parse) => {
    // The least of three calls: a garbage collection that falls into one call is the heap's
    // cost, not the parser's; a super-linear parser is slow in every call.
    const budgetMs = PARSER_BUDGET_SCANS * linearScanMs();
    const usedMs = Math.min(cpuMs(parse), cpuMs(parse), cpuMs(parse));
    expect(usedMs).toBeLessThan(budgetMs);
  });
});

describe("the JSON body parser, on 3 MiB bodies", () => {
  // Parsing a whole body is a request's work, not one value's: it has the request's budget.
  const bodies: [string, string][] = [
    // Each '"' is escaped in the JSON text: a tenth more characters than the string holds.
    ["near-forbidden keys", JSON.stringify({ text: run('"__proto_', "", LONG * 0.9) })],
    ["constructor keys, which make it walk every value", JSON.stringify(Array.from({ length: LONG / 20 }, () => ({ constructor: 1 })))],
  ];

  it.each(bodies)("reads a body full of %s within the CPU budget", (_name, body) => {
    expect(body.length).toBeLessThanOrEqual(DEFAULT_BODY_LIMIT_BYTES);
    const budgetMs = REQUEST_BUDGET_SCANS * linearScanMs();
    expect(cpuMs(() => parseJsonBody(body))).toBeLessThan(budgetMs);
  });
});

const decoration: PodDecoration = {
  apiVersion: "apps.kusionstack.io/v1alpha1",
  kind: "PodDecoration",
  metadata: { name: "sidecar", namespace: "team-a", uid: "uid-sidecar", creationTimestamp: "2026-01-01T00:00:00Z" },
  spec: { selector: {}, template: { containers: [{ name: "sidecar", image: "example.com/sidecar:1", resources: { requests: { cpu: "100m" } } }] } },
};
const source: DecorationSource = { decorations: () => [decoration], revisionData: () => undefined };

let server: WebhookServer;
beforeAll(async () => {
  server = await createWebhookServer({
    logger: pino({ level: "silent" }),
    metrics: createWebhookMetrics(new Registry()),
    readiness: () => ({ ready: true }),
    handlers: admissionHandlers({ source, onDecorationError: "reject", trustRequester: trustNobody }),
  });
});
afterAll(async () => {
  await server.close();
});

let reviews = 0;
function review(kind: { group: string; version: string; kind: string }, object: Record<string, unknown>) {
  reviews++;
  return {
    apiVersion: "admission.k8s.io/v1",
    kind: "AdmissionReview",
    request: { uid: `uid-${reviews}`, kind, operation: "CREATE", namespace: "team-a", name: `object-${reviews}`, object },
  };
}

const POD = { group: "", version: "v1", kind: "Pod" };
const POD_DECORATION = { group: "apps.kusionstack.io", version: "v1alpha1", kind: "PodDecoration" };
const COLLA_SET = { group: "apps.kusionstack.io", version: "v1alpha1", kind: "CollaSet" };

const pod = (container: Record<string, unknown>, spec: Record<string, unknown> = {}) => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name: `pod-${reviews}` },
  spec: { containers: [{ name: "app", image: "example.com/app:1", ...container }], ...spec },
});
const collaSet = (container: Record<string, unknown>) => ({
  apiVersion: "apps.kusionstack.io/v1alpha1",
  kind: "CollaSet",
  metadata: { name: "attack", namespace: "team-a" },
  spec: {
    replicas: 1,
    selector: { matchLabels: { app: "web" } },
    template: { metadata: { labels: { app: "web" } }, spec: { containers: [{ name: "app", image: "example.com/app:1", ...container }] } },
  },
});

const longQuantity = () => run("1", "x");
const longLimit = () => ({ resources: { limits: { cpu: longQuantity() } } });
const longRequest = () => ({ resources: { requests: { memory: longQuantity() } } });
const manyKeys = (key: string) => Array.from({ length: Math.floor(LONG / 2 / (key.length + 3)) }, () => key);

type Case = [string, string, { group: string; version: string; kind: string }, () => Record<string, unknown>];
const requests: Case[] = [
  ["a pod with a 3 MiB limit", "/mutate-pods", POD, () => pod(longLimit())],
  ["a pod with a 3 MiB request", "/mutate-pods", POD, () => pod(longRequest(), { resources: { requests: { memory: "1Gi" } } })],
  ["a pod with a 3 MiB pod-level request", "/mutate-pods", POD, () => pod({}, { resources: { requests: { cpu: longQuantity() } } })],
  ["a pod with a 3 MiB container name", "/mutate-pods", POD, () => pod({ name: run("a-", "_") })],
  ["a pod with a 3 MiB image", "/mutate-pods", POD, () => pod({ image: run("a/", ":") })],
  ["a PodDecoration with a limit of 60,000 digits", "/mutate-poddecorations", POD_DECORATION, () => podDecoration({ containers: [{ name: "s", image: "s:1", resources: { limits: { cpu: run("1", "x", 60_000) } } }] })],
  ["a PodDecoration with a limit of 60,000 digits", "/validate-poddecorations", POD_DECORATION, () => podDecoration({ containers: [{ name: "s", image: "s:1", resources: { limits: { cpu: run("1", "x", 60_000) } } }] })],
  ["a PodDecoration with a 3 MiB limit", "/mutate-poddecorations", POD_DECORATION, () => podDecoration({ containers: [{ name: "s", image: "s:1", ...longLimit() }] })],
  ["a PodDecoration with a 3 MiB limit", "/validate-poddecorations", POD_DECORATION, () => podDecoration({ containers: [{ name: "s", image: "s:1", ...longLimit() }] })],
  ["a PodDecoration with a 3 MiB request", "/validate-poddecorations", POD_DECORATION, () => podDecoration({ containers: [{ name: "s", image: "s:1", ...longRequest() }] })],
  ["a PodDecoration with a 3 MiB emptyDir sizeLimit", "/validate-poddecorations", POD_DECORATION, () => podDecoration({ volumes: [{ name: "v", emptyDir: { sizeLimit: longQuantity() } }] })],
  ["a PodDecoration with a 3 MiB container name", "/validate-poddecorations", POD_DECORATION, () => podDecoration({ containers: [{ name: run("a-", "_"), image: "s:1" }] })],
  ["a PodDecoration with a 3 MiB label value", "/validate-poddecorations", POD_DECORATION, () => podDecoration({ metadata: [{ labels: { team: run("a.", "-") } }] })],
  [
    "a PodDecoration whose matchLabelKeys and mismatchLabelKeys are long lists",
    "/validate-poddecorations",
    POD_DECORATION,
    () => podDecoration({
      affinity: {
        overrideAffinity: {
          podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ labelSelector: {}, topologyKey: "zone", matchLabelKeys: manyKeys("a"), mismatchLabelKeys: manyKeys("b") }] },
        },
      },
    }),
  ],
  ["a CollaSet with a 3 MiB limit", "/mutate-collasets", COLLA_SET, () => collaSet(longLimit())],
  ["a CollaSet with a 3 MiB limit", "/validate-collasets", COLLA_SET, () => collaSet(longLimit())],
  ["a CollaSet with a 3 MiB container name", "/validate-collasets", COLLA_SET, () => collaSet({ name: run("a-", "_") })],
];

describe("the webhook's handlers, on 3 MiB AdmissionReviews", () => {
  it.each(requests)("answer %s at %s within the CPU budget", async (_name, url, kind, object) => {
    const payload = JSON.stringify(review(kind, object()));
    expect(payload.length).toBeLessThanOrEqual(DEFAULT_BODY_LIMIT_BYTES);
    const budgetMs = REQUEST_BUDGET_SCANS * linearScanMs();
    let statusCode = 0;
    const used = await cpuMsAsync(async () => {
      ({ statusCode } = await server.inject({ method: "POST", url, headers: { "content-type": "application/json" }, payload }));
    });
    expect(statusCode).toBe(200);
    expect(used).toBeLessThan(budgetMs);
  });
});
