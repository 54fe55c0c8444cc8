// What every answer of the webhook must be, whatever it was sent: a 4xx whose JSON body says
// why, or a well-formed AdmissionReview v1 for the request the server parsed — its uid
// echoed, a JSON Patch that applies to the object, a denial with a code and a message.
import jsonpatch from "fast-json-patch";
import { pointerKeys } from "../../../src/api/json-pointer.ts";
import type { FuzzRequest } from "./admission-inputs.ts";
import { WEBHOOK_PATHS } from "./admission-inputs.ts";

export interface Answer {
  status: number;
  contentType: string | undefined;
  body: Buffer;
}

const HEALTH_PATHS = ["/healthz", "/readyz"];

/** The problems with one answer; empty when it is what the project promises. */
export function answerProblems(request: FuzzRequest, answer: Answer): string[] {
  if (answer.status >= 400 && answer.status < 500) return clientErrorProblems(request, answer);
  const route = request.path.split("?")[0]!;
  // Health and readiness are the only pages served to GET (and so to HEAD).
  if (answer.status === 200 && HEALTH_PATHS.includes(route) && (request.method === "GET" || request.method === "HEAD")) return [];
  if (answer.status !== 200) return [`status ${answer.status}: only 200 or a 4xx may answer bad input (body ${preview(answer.body)})`];
  if (request.method !== "POST" || !WEBHOOK_PATHS.includes(route)) return [`200 for ${request.method} ${request.path}`];
  return reviewProblems(request, answer);
}

function clientErrorProblems(request: FuzzRequest, answer: Answer): string[] {
  // A HEAD answer has no body, by definition.
  if (request.method === "HEAD") return answer.body.length === 0 ? [] : ["a body in the answer to HEAD"];
  if (!(answer.contentType ?? "").startsWith("application/json")) return [`${answer.status} with content type ${answer.contentType ?? "none"}`];
  const body = parse(answer.body);
  if (!isObject(body) || typeof body.message !== "string" || body.message.trim() === "") return [`${answer.status} without a reason: ${preview(answer.body)}`];
  if (body.statusCode !== answer.status) return [`${answer.status} whose body says statusCode ${String(body.statusCode)}`];
  // A reason must be true: JSON that parses is not "not valid JSON", whatever else is wrong with it.
  if (/not (valid )?JSON/i.test(body.message) && Buffer.isBuffer(request.body) && parse(request.body) !== undefined) return [`${answer.status} calls valid JSON invalid: ${body.message}`];
  return [];
}

function reviewProblems(request: FuzzRequest, answer: Answer): string[] {
  // What the server saw: the bytes decoded as UTF-8 (bad bytes become U+FFFD), a BOM dropped.
  const sent = Buffer.isBuffer(request.body) ? parse(request.body) : undefined;
  const sentRequest = isObject(sent) && isObject(sent.request) ? sent.request : undefined;
  if (sentRequest === undefined || typeof sentRequest.uid !== "string") return [`200 for a body that is not an AdmissionReview: ${preview(request.body)}`];

  const review = parse(answer.body);
  if (!isObject(review)) return [`200 whose body is not JSON: ${preview(answer.body)}`];
  const problems: string[] = [];
  if (review.apiVersion !== "admission.k8s.io/v1") problems.push(`apiVersion ${String(review.apiVersion)}`);
  if (review.kind !== "AdmissionReview") problems.push(`kind ${String(review.kind)}`);
  const response = review.response;
  if (!isObject(response)) return [...problems, "no response"];
  if (response.uid !== sentRequest.uid) problems.push(`uid ${JSON.stringify(response.uid)} does not echo ${JSON.stringify(sentRequest.uid)}`);
  if (typeof response.allowed !== "boolean") problems.push(`allowed is ${JSON.stringify(response.allowed)}`);
  if (response.warnings !== undefined && !(Array.isArray(response.warnings) && response.warnings.every((warning) => typeof warning === "string"))) {
    problems.push(`warnings ${JSON.stringify(response.warnings)}`);
  }
  if (response.patch !== undefined) problems.push(...patchProblems(response, sentRequest.object));
  if (response.allowed === false) problems.push(...denialProblems(request.path, response.status));
  if (response.allowed === false && isPodCreate(request.path, sentRequest) && !isDecorationFailure(response.status)) {
    problems.push(`a pod refused for something other than a decoration's failure: ${JSON.stringify(response.status).slice(0, 300)}`);
  }
  return problems;
}

/** A pod CREATE sent to the pod webhook: never refused because of the pod (DESIGN §10). */
export function isPodCreate(path: string, request: Record<string, unknown>): boolean {
  const kind = request.kind;
  return path.split("?")[0] === "/mutate-pods" && request.operation === "CREATE" && isObject(kind) && kind.group === "" && kind.kind === "Pod" &&
    (request.subResource ?? "") === "" && request.object != null;
}

/** The one designed refusal of a pod: a matching decoration that cannot be rendered, named. */
function isDecorationFailure(status: unknown): boolean {
  return isObject(status) && typeof status.message === "string" && /^pod-decorator: PodDecoration [^/\s]+\/[^:\s]+: /.test(status.message);
}

function patchProblems(response: Record<string, unknown>, object: unknown): string[] {
  if (response.allowed !== true) return ["a patch on a denial"];
  if (response.patchType !== "JSONPatch") return [`patchType ${String(response.patchType)}`];
  if (typeof response.patch !== "string") return ["patch is not a string"];
  const operations = parse(Buffer.from(response.patch, "base64"));
  if (!Array.isArray(operations) || operations.length === 0) return [`patch is not a non-empty JSON array: ${response.patch.slice(0, 80)}`];
  try {
    // Unbanned: a "__proto__" key is just a key to the API server; decorations written before the
    // webhook may carry one in a field the CRD preserves, and the webhook copies it faithfully.
    jsonpatch.applyPatch(copyAlong(object, operations as jsonpatch.Operation[]), operations as jsonpatch.Operation[], true, true, false);
    return [];
  } catch (error) {
    return [`the patch does not apply to the request's object: ${error instanceof Error ? error.message : String(error)}`];
  }
}

/**
 * A copy of `object` whose containers along each operation's paths are new and everything else
 * shared: enough to apply the patch to without cloning, or walking, what it does not touch. The
 * fuzzer sends objects thousands of levels deep (a `metadata.name` 5,000 objects deep, say),
 * which structuredClone cannot copy on the test's stack.
 */
function copyAlong(object: unknown, operations: readonly jsonpatch.Operation[]): unknown {
  const shallow = (value: unknown): unknown => (Array.isArray(value) ? [...(value as unknown[])] : value !== null && typeof value === "object" ? { ...value } : value);
  const root = shallow(object);
  for (const operation of operations) {
    for (const pointer of [operation.path, "from" in operation ? operation.from : undefined]) {
      if (pointer === undefined) continue;
      let node = root as Record<string, unknown> | undefined;
      for (const segment of pointerKeys(pointer).slice(0, -1)) {
        if (node === null || typeof node !== "object" || !Object.hasOwn(node, segment)) break;
        node[segment] = shallow(node[segment]);
        node = node[segment] as Record<string, unknown>;
      }
    }
  }
  return root;
}

function denialProblems(path: string, status: unknown): string[] {
  if (!isObject(status) || typeof status.code !== "number" || typeof status.message !== "string" || status.message === "") {
    return [`a denial without a code and a message: ${JSON.stringify(status)}`];
  }
  const { code, message } = status;
  if (code < 400 || code > 599) return [`denial code ${code}`];
  // The one designed 5xx: a matching decoration that cannot be rendered, named in the message.
  // Anything else means a handler threw on the input.
  if (code >= 500 && !/^pod-decorator: PodDecoration [^/\s]+\/[^:\s]+: /.test(message)) return [`an internal error: ${message.slice(0, 300)}`];
  if (path.startsWith("/validate-") && code === 422) {
    const unexplained = message.split("; ").filter((part) => !/^(PodDecoration|CollaSet)\/[^:]*: \S/.test(part));
    if (unexplained.length > 0) return [`a validation message not in "Kind/name: field.path: reason" form: ${unexplained[0]!.slice(0, 200)}`];
  }
  return [];
}

function parse(bytes: Buffer): unknown {
  try {
    return JSON.parse(new TextDecoder("utf-8").decode(bytes));
  } catch {
    return undefined;
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function preview(body: FuzzRequest["body"]): string {
  if (!Buffer.isBuffer(body)) return body === undefined ? "(none)" : `(${body.oversizedBytes} bytes)`;
  const text = body.subarray(0, 160).toString("utf8");
  return body.length > 160 ? `${text}… (${body.length} bytes)` : text;
}
