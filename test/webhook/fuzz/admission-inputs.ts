// fast-check generators of what can reach the webhook's port: valid AdmissionReviews with
// adversarial pods and decorations, the same reviews truncated, type-confused, nested deep,
// carrying prototype keys, huge arrays or bytes that are not UTF-8; malformed JSON; bodies
// over the limit; unknown paths, wrong methods and wrong content types.
import fc from "fast-check";
import { REVISIONS_ANNOTATION } from "../../../src/decoration/recording.ts";
import { DEFAULT_BODY_LIMIT_BYTES, webhookPaths } from "../../../src/webhook/server.ts";
import { typicalPod } from "../../bench/typical-workload.ts";
import { decorations as validDecorations, pod as validPod } from "../../decoration/arbitraries.ts";
import { FUZZ_CONTROLLER, POD_NAMESPACES } from "./cached-decorations.ts";

/** A body larger than the server's limit, produced while sending rather than held in memory. */
export interface OversizedBody {
  oversizedBytes: number;
  /** Sent without Content-Length, so the server only learns the size by reading. */
  chunked: boolean;
}

export interface FuzzRequest {
  /** What kind of input this is, for the summary and for failure messages. */
  what: string;
  method: string;
  path: string;
  contentType: string | undefined;
  body: Buffer | OversizedBody | undefined;
  /** On a connection of its own instead of the shared keep-alive pool. */
  freshConnection: boolean;
}

export const WEBHOOK_PATHS: readonly string[] = Object.values(webhookPaths);

type Json = unknown;
type Path = (string | number)[];

const DEEP_MARKER = "@@DEEP@@";
const BYTES_MARKER = "@@BYTES@@";

// ---- objects under review ----------------------------------------------------------------

const labelValue = fc.constantFrom("web", "api", "frontend", "canary", "backend", "");
const adversarialLabels = fc.dictionary(fc.constantFrom("app", "tier", "track", "example.com/team", "bad key!", ""), labelValue, { maxKeys: 5 });

function container(name: string) {
  return { name, image: `example.com/${name}:1` };
}

/** Pods the API server would send, and pods only a broken client would. */
const adversarialPod: fc.Arbitrary<Json> = fc.oneof(
  fc.record({ metadata: fc.record({ name: fc.constant("p"), labels: adversarialLabels, annotations: fc.dictionary(fc.constantFrom(REVISIONS_ANNOTATION, "note"), fc.oneof(fc.string(), fc.json(), fc.constantFrom("[]", '[{"name":1}]', '[{"name":"x","revision":"y"}]'))) }), spec: fc.constant({ containers: [container("app")] }) }),
  // Huge arrays and maps within the body limit.
  fc.integer({ min: 100, max: 1000 }).map((count) => ({ metadata: { name: "many", labels: { app: "web", tier: "frontend" } }, spec: { containers: Array.from({ length: count }, (_, index) => container(`c${index}`)) } })),
  fc.integer({ min: 100, max: 2000 }).map((count) => ({ metadata: { name: "labels", labels: Object.fromEntries(Array.from({ length: count }, (_, index) => [`k${index}`, "v"])) }, spec: { containers: [container("app")] } })),
  fc.integer({ min: 1000, max: 100_000 }).map((size) => ({ metadata: { name: "long", labels: { app: "web" }, annotations: { note: "x".repeat(size) } }, spec: { containers: [container("app")] } })),
  // Duplicate, empty and invalid container names; no containers; no spec; no metadata.
  fc.constantFrom<Json>(
    { metadata: { name: "dup", labels: { app: "web" } }, spec: { containers: [container("app"), container("app")] } },
    { metadata: { name: "empty" }, spec: { containers: [] } },
    { metadata: { name: "bad-name", labels: { app: "web" } }, spec: { containers: [container("Not_A_Name")] } },
    { metadata: { labels: { app: "web" } }, spec: { containers: [container("app")] } },
    { spec: { containers: [container("app")] } },
    { metadata: { name: "no-spec" } },
    {},
  ),
);

const pod: fc.Arbitrary<Json> = fc.oneof(
  { arbitrary: validPod, weight: 4 },
  { arbitrary: fc.constant(null).map(() => typicalPod()), weight: 2 },
  { arbitrary: adversarialPod, weight: 3 },
);

const decoration: fc.Arbitrary<Json> = fc.oneof(
  { arbitrary: validDecorations.filter((list) => list.length > 0).map((list) => list[0]), weight: 3 },
  {
    arbitrary: fc.constantFrom<Json>(
      { apiVersion: "apps.kusionstack.io/v1alpha1", kind: "PodDecoration", metadata: { name: "both" }, spec: { selector: {}, updateStrategy: { rollingUpdate: { partition: 1, selector: {} } } } },
      { apiVersion: "apps.kusionstack.io/v1alpha1", kind: "PodDecoration", metadata: { name: "no-selector" }, spec: { template: {} } },
      { apiVersion: "apps.kusionstack.io/v1alpha1", kind: "PodDecoration", metadata: { name: "Bad_Name" }, spec: { selector: { matchLabels: { "bad key!": "x" } } } },
      { apiVersion: "apps.kusionstack.io/v1alpha1", kind: "PodDecoration", metadata: { name: "dups" }, spec: { selector: {}, template: { containers: [container("a"), container("a")], initContainers: [container("a")] } } },
      { apiVersion: "apps.kusionstack.io/v1alpha1", kind: "PodDecoration", metadata: { name: "deleting", deletionTimestamp: "2026-01-01T00:00:00Z" }, spec: { selector: "x" } },
      { apiVersion: "v1", kind: "Pod", metadata: { name: "wrong-kind" }, spec: { containers: [container("app")] } },
    ),
    weight: 1,
  },
);

const collaSet: fc.Arbitrary<Json> = fc.record({
  apiVersion: fc.constant("apps.kusionstack.io/v1alpha1"),
  kind: fc.constant("CollaSet"),
  metadata: fc.record({ name: fc.constantFrom("web", "api", "Bad_Name", "") }),
  spec: fc.record(
    {
      replicas: fc.oneof(fc.integer({ min: -2, max: 5 }), fc.constant("3")),
      selector: fc.oneof(fc.constant({ matchLabels: { app: "web" } }), fc.constant({}), fc.constant({ matchLabels: { app: "other" } })),
      template: fc.record({ metadata: fc.record({ labels: adversarialLabels }), spec: fc.oneof(fc.constant({ containers: [container("app")] }), fc.constant({ containers: [] }), fc.constant({})) }, { requiredKeys: [] }),
      updateStrategy: fc.record({ podUpgradePolicy: fc.constantFrom("Recreate", "InPlaceIfPossible", "InPlaceOnly", "Sometimes"), rollingUpdate: fc.record({ byPartition: fc.record({ partition: fc.integer({ min: -1, max: 3 }) }), maxUnavailable: fc.constantFrom(1, "25%", "lots", -1) }) }, { requiredKeys: [] }),
      scaleStrategy: fc.record({ podToDelete: fc.array(fc.constantFrom("web-0", ""), { maxLength: 2 }) }),
      historyLimit: fc.integer({ min: 0, max: 3 }),
    },
    { requiredKeys: ["selector"] },
  ),
});

// ---- valid AdmissionReviews ------------------------------------------------------------------

const uid = fc.oneof(fc.uuid(), fc.string({ minLength: 1, maxLength: 40 }));
const operation = fc.oneof({ arbitrary: fc.constant("CREATE"), weight: 6 }, { arbitrary: fc.constantFrom("UPDATE", "DELETE", "CONNECT"), weight: 2 });

// Mostly a workload controller; sometimes pod-decorator's own controller, whose bookkeeping
// counts; sometimes userInfo no API server would send.
const userInfo = fc.oneof(
  { arbitrary: fc.constant<Json>({ username: "system:serviceaccount:kube-system:replicaset-controller", groups: ["system:serviceaccounts", "system:authenticated"] }), weight: 6 },
  { arbitrary: fc.constant<Json>({ username: FUZZ_CONTROLLER, groups: ["system:serviceaccounts", "system:authenticated"] }), weight: 2 },
  { arbitrary: fc.constantFrom<Json>({}, { username: 7 }, { username: "" }, { groups: "system:masters" }, undefined), weight: 1 },
);

function review(kind: { group: string; version: string; kind: string }, resource: string, object: fc.Arbitrary<Json>): fc.Arbitrary<Json> {
  return fc.record({ uid, namespace: fc.constantFrom(...POD_NAMESPACES), operation, object, dryRun: fc.boolean(), subResource: fc.constantFrom(undefined, undefined, undefined, "status"), userInfo })
    .map(({ uid, namespace, operation, object, dryRun, subResource, userInfo }) => {
      // The API server fills in the namespace before admission; a pod from a manifest may lack it.
      const withNamespace = object !== null && typeof object === "object" && "metadata" in object && typeof object.metadata === "object"
        ? { ...object, metadata: { ...object.metadata, namespace } }
        : object;
      return {
        apiVersion: "admission.k8s.io/v1",
        kind: "AdmissionReview",
        request: {
          uid,
          kind,
          resource: { group: kind.group, version: kind.version, resource },
          ...(subResource === undefined ? {} : { subResource }),
          name: "obj",
          namespace,
          operation,
          ...(userInfo === undefined ? {} : { userInfo }),
          object: operation === "DELETE" ? null : withNamespace,
          oldObject: operation === "CREATE" ? null : withNamespace,
          dryRun,
        },
      };
    });
}

const kusion = (kind: string) => ({ group: "apps.kusionstack.io", version: "v1alpha1", kind });

/** A review with the webhook that handles its kind (any, for a kind none handles). */
interface RoutedReview {
  route: string;
  value: Json;
}

function routed(reviews: fc.Arbitrary<Json>, routes: readonly string[]): fc.Arbitrary<RoutedReview> {
  return fc.tuple(reviews, fc.constantFrom(...routes)).map(([value, route]) => ({ route, value }));
}

/** A valid AdmissionReview of any of the kinds the webhooks handle. */
const validReview: fc.Arbitrary<RoutedReview> = fc.oneof(
  { arbitrary: routed(review({ group: "", version: "v1", kind: "Pod" }, "pods", pod), [webhookPaths["mutate-pods"]]), weight: 5 },
  { arbitrary: routed(review(kusion("PodDecoration"), "poddecorations", decoration), [webhookPaths["mutate-poddecorations"], webhookPaths["validate-poddecorations"]]), weight: 2 },
  { arbitrary: routed(review(kusion("CollaSet"), "collasets", collaSet), [webhookPaths["mutate-collasets"], webhookPaths["validate-collasets"]]), weight: 2 },
  { arbitrary: routed(review({ group: "", version: "v1", kind: "ConfigMap" }, "configmaps", fc.constant({ metadata: { name: "cm" }, data: { a: "b" } })), WEBHOOK_PATHS), weight: 1 },
);

// ---- structural mutations ------------------------------------------------------------------

const confusingValue: fc.Arbitrary<Json> = fc.oneof(
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.string({ maxLength: 20 }),
  fc.constant([]),
  fc.constant({}),
  fc.array(fc.integer(), { maxLength: 3 }),
  fc.jsonValue({ maxDepth: 2 }),
  fc.constantFrom("x".repeat(100_000), Number.MAX_SAFE_INTEGER, 1e308, -1),
);

type Mutation =
  | { type: "replace"; at: number; value: Json }
  | { type: "delete"; at: number }
  | { type: "deep"; at: number; depth: number; arrays: boolean }
  | { type: "key"; at: number; key: string; value: Json; escaped: boolean }
  | { type: "huge-array"; at: number; length: number }
  | { type: "bytes"; at: number; bytes: readonly number[] };

const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ type: fc.constant("replace" as const), at: fc.nat(), value: confusingValue }),
  fc.record({ type: fc.constant("delete" as const), at: fc.nat() }),
  fc.record({ type: fc.constant("deep" as const), at: fc.nat(), depth: fc.constantFrom(20, 64, 99, 100, 101, 500, 5_000, 20_000), arrays: fc.boolean() }),
  fc.record({
    type: fc.constant("key" as const),
    at: fc.nat(),
    key: fc.constantFrom("__proto__", "constructor", "prototype", "toString", "hasOwnProperty", "__defineGetter__", "valueOf"),
    value: fc.constantFrom<Json>({ polluted: "yes" }, { prototype: { polluted: "yes" } }, "x", 1, null, []),
    // Spelled with \u escapes, which JSON.parse reads as the same key.
    escaped: fc.boolean(),
  }),
  fc.record({ type: fc.constant("huge-array" as const), at: fc.nat(), length: fc.integer({ min: 1_000, max: 20_000 }) }),
  // Lone continuation bytes, overlong encodings, surrogates, bytes that never occur in UTF-8.
  fc.record({ type: fc.constant("bytes" as const), at: fc.nat(), bytes: fc.oneof(fc.constantFrom([0x80], [0xc0, 0xaf], [0xed, 0xa0, 0x80], [0xff, 0xfe], [0xc3, 0x28], [0xf4, 0x90, 0x80, 0x80], [0x00]), fc.array(fc.integer({ min: 0x80, max: 0xff }), { minLength: 1, maxLength: 6 })) }),
);

function allPaths(value: Json, prefix: Path = [], into: Path[] = []): Path[] {
  into.push(prefix);
  if (prefix.length >= 8) return into;
  if (Array.isArray(value)) value.slice(0, 20).forEach((item, index) => allPaths(item, [...prefix, index], into));
  else if (value !== null && typeof value === "object") for (const [key, item] of Object.entries(value)) allPaths(item, [...prefix, key], into);
  return into;
}

function parentOf(root: Json, path: Path): Record<string | number, Json> | undefined {
  let node = root;
  for (const part of path.slice(0, -1)) {
    if (node === null || typeof node !== "object") return undefined;
    node = (node as Record<string | number, Json>)[part];
  }
  return node !== null && typeof node === "object" ? (node as Record<string | number, Json>) : undefined;
}

/** Applies the mutations to a copy; markers stand in for what JSON.stringify cannot write. */
interface Mutated {
  value: Json;
  deep?: { depth: number; arrays: boolean };
  bytes?: readonly number[];
  escapeKeys?: boolean;
}

function mutate(original: Json, mutations: readonly Mutation[]): Mutated {
  let root = JSON.parse(JSON.stringify(original)) as Json;
  let deep: { depth: number; arrays: boolean } | undefined;
  let bytes: readonly number[] | undefined;
  let escapeKeys = false;
  const set = (path: Path, shared: Json) => {
    // Generated constants are shared instances: a copy keeps a later mutation from making a cycle.
    const value = shared === undefined ? shared : (JSON.parse(JSON.stringify(shared)) as Json);
    if (path.length === 0) root = value;
    else {
      const parent = parentOf(root, path);
      if (parent !== undefined) Object.defineProperty(parent, path.at(-1)!, { value, enumerable: true, writable: true, configurable: true });
    }
  };
  for (const change of mutations) {
    const paths = allPaths(root);
    const path = paths[change.at % paths.length]!;
    switch (change.type) {
      case "replace":
        set(path, change.value);
        break;
      case "delete": {
        const parent = parentOf(root, path);
        if (parent !== undefined && path.length > 0) {
          if (Array.isArray(parent)) parent.splice(Number(path.at(-1)), 1);
          else delete parent[path.at(-1)!];
        }
        break;
      }
      case "deep":
        if (deep === undefined) {
          deep = { depth: change.depth, arrays: change.arrays };
          set(path, DEEP_MARKER);
        }
        break;
      case "key": {
        const objects = paths.filter((candidate) => {
          const node = candidate.length === 0 ? root : parentOf(root, candidate)?.[candidate.at(-1)!];
          return node !== null && typeof node === "object" && !Array.isArray(node);
        });
        if (objects.length > 0) set([...objects[change.at % objects.length]!, change.key], change.value);
        escapeKeys ||= change.escaped;
        break;
      }
      case "huge-array":
        set(path, Array.from({ length: change.length }, (_, index) => (index % 2 === 0 ? index : { name: `n${index}` })));
        break;
      case "bytes":
        if (bytes === undefined) {
          bytes = change.bytes;
          set(path, `a${BYTES_MARKER}z`);
        }
        break;
    }
  }
  return { value: root, escapeKeys, ...(deep === undefined ? {} : { deep }), ...(bytes === undefined ? {} : { bytes }) };
}

function serialise({ value, deep, bytes, escapeKeys }: Mutated): Buffer {
  let text = JSON.stringify(value) ?? "";
  if (escapeKeys === true) text = text.replaceAll('"__proto__":', '"\\u005f_proto__":').replaceAll('"constructor":', '"constr\\u0075ctor":');
  if (deep !== undefined) {
    const [open, close] = deep.arrays ? ["[", "]"] : ['{"a":', "}"];
    text = text.replace(`"${DEEP_MARKER}"`, () => `${open.repeat(deep.depth)}1${close.repeat(deep.depth)}`);
  }
  if (bytes === undefined) return Buffer.from(text);
  const [before, after = ""] = text.split(BYTES_MARKER);
  return Buffer.concat([Buffer.from(before ?? ""), Buffer.from(bytes), Buffer.from(after)]);
}

// ---- bodies ----------------------------------------------------------------------------------

const malformedJson = fc.oneof(
  fc.constantFrom(
    "{", "}", "[1,]", '{"a":1,}', "NaN", "undefined", "{'a':1}", '{"apiVersion":"admission.k8s.io/v1"} trailing', "\uFEFF{}", "[]", "1e999", '"string"',
    "true", "null", "0", "{}", " ", "\n", '{"request":', '{"a":"\\ud800"}', '{"a":"\\x41"}', '{"a":01}', "[".repeat(20_000), "{\"a\":".repeat(20_000),
  ),
  fc.string({ maxLength: 200 }),
  fc.json({ maxDepth: 4 }),
);

interface Body {
  what: string;
  /** The path the body is meant for, if any; requests go there more often than not. */
  route?: string;
  body: Buffer | OversizedBody | undefined;
}

const body: fc.Arbitrary<Body> = fc.oneof(
  { arbitrary: validReview.map(({ route, value }) => ({ what: "valid review", route, body: Buffer.from(JSON.stringify(value)) })), weight: 10 },
  {
    arbitrary: fc.tuple(validReview, fc.array(mutation, { minLength: 1, maxLength: 3 })).map(([{ route, value }, mutations]) => ({
      what: `mutated review (${mutations.map((change) => change.type).join(", ")})`,
      route,
      body: serialise(mutate(value, mutations)),
    })),
    weight: 10,
  },
  {
    arbitrary: fc.tuple(validReview, fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true })).map(([{ route, value }, cut]) => {
      const text = Buffer.from(JSON.stringify(value));
      return { what: "truncated review", route, body: text.subarray(0, Math.floor(text.length * cut)) };
    }),
    weight: 3,
  },
  { arbitrary: malformedJson.map((text) => ({ what: "malformed JSON", body: Buffer.from(text) })), weight: 3 },
  { arbitrary: fc.uint8Array({ maxLength: 300 }).map((bytes) => ({ what: "random bytes", body: Buffer.from(bytes) })), weight: 1 },
  { arbitrary: fc.constant({ what: "no body", body: undefined }), weight: 1 },
);

const method = fc.oneof({ arbitrary: fc.constant("POST"), weight: 20 }, { arbitrary: fc.constantFrom("GET", "PUT", "PATCH", "DELETE", "OPTIONS", "HEAD"), weight: 2 });

const path = fc.oneof(
  { arbitrary: fc.constantFrom(...WEBHOOK_PATHS), weight: 12 },
  {
    arbitrary: fc.constantFrom(
      "/", "/mutate", "/mutate-pods/", "/mutate-pods/x", "/MUTATE-PODS", "/mutate-pods?dryRun=true&x=%zz", "/validate-pods", "/metrics", "/healthz",
      "/%00", "/%zz", `/${"a".repeat(5000)}`, "//mutate-pods", "/mutate-pods%2F", "/../mutate-pods", "/mutate-pods;x",
    ),
    weight: 2,
  },
);

const contentType = fc.oneof(
  { arbitrary: fc.constant("application/json"), weight: 20 },
  {
    arbitrary: fc.constantFrom(
      "application/json; charset=utf-8", "text/plain", "application/x-www-form-urlencoded", "application/yaml", "multipart/form-data; boundary=x",
      "application/json; charset=latin1", undefined, "", "application/jsonx", "APPLICATION/JSON", "application/json, text/plain", "*/*",
    ),
    weight: 3,
  },
);

function request(bodies: fc.Arbitrary<Body>): fc.Arbitrary<FuzzRequest> {
  return fc.record({ method, path, toRoute: fc.nat(3).map((draw) => draw > 0), contentType, body: bodies, freshConnection: fc.nat(9).map((draw) => draw === 0) })
    .map(({ method, path, toRoute, contentType, body, freshConnection }) => {
      const generated: FuzzRequest = { what: body.what, method, path: toRoute && body.route !== undefined ? body.route : path, contentType, body: body.body, freshConnection };
      // Counterexamples print as requests, not as thousands of byte values.
      return Object.assign(generated, { [fc.toStringMethod]: () => describeRequest(generated) });
    });
}

/** Everything but bodies over the limit. */
export const fuzzRequest: fc.Arbitrary<FuzzRequest> = request(body);

/**
 * AdmissionReviews over the body limit, to every webhook: expensive to send, so generated
 * separately and sparingly. The server learns the size from Content-Length or by reading.
 */
export const oversizedRequest: fc.Arbitrary<FuzzRequest> = fc
  .record({ path: fc.constantFrom(...WEBHOOK_PATHS), extra: fc.integer({ min: 1, max: 1024 * 1024 }), chunked: fc.boolean(), freshConnection: fc.boolean() })
  .map(({ path, extra, chunked, freshConnection }) => {
    const generated: FuzzRequest = {
      what: `oversized body (${chunked ? "chunked" : "Content-Length"})`,
      method: "POST",
      path,
      contentType: "application/json",
      body: { oversizedBytes: DEFAULT_BODY_LIMIT_BYTES + extra, chunked },
      freshConnection,
    };
    return Object.assign(generated, { [fc.toStringMethod]: () => describeRequest(generated) });
  });

/** One line for people: method, path, content type, kind of input and the start of the body. */
export function describeRequest(request: FuzzRequest): string {
  const body = Buffer.isBuffer(request.body)
    ? `${request.body.length} bytes: ${request.body.subarray(0, 300).toString("utf8")}${request.body.length > 300 ? "…" : ""}`
    : request.body === undefined ? "no body" : `${request.body.oversizedBytes} bytes${request.body.chunked ? ", chunked" : ""}`;
  return `${request.method} ${request.path} [${request.contentType ?? "no content type"}${request.freshConnection ? ", own connection" : ""}] ${request.what}; ${body}`;
}
