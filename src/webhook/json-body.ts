// The webhook's JSON body parser: fastify's default answers every bad body with the same
// "Body is not valid JSON", even valid JSON it refuses for a "__proto__" key. This one says
// what is wrong and where, and refuses the same keys (they would reach code that copies and
// merges objects).
import { childPath, indexPath } from "../api/field-errors.ts";

/** An error fastify's error handler answers with its statusCode. */
export class BadBodyError extends Error {
  readonly statusCode = 400;
}

// A cheap test on the text first: the walk is needed only when one of the words appears as a
// key, spelled plainly or with \u escapes (`"\u005f_proto__"` parses to "__proto__" too).
const SUSPICIOUS = new RegExp(["__proto__", "constructor"].map((word) => `"${[...word].map(escapable).join("")}"`).join("|"));

function escapable(character: string): string {
  const hex = character.charCodeAt(0).toString(16).padStart(4, "0");
  return `(?:${character}|\\\\u${hex.replace(/[a-f]/g, (digit) => `[${digit}${digit.toUpperCase()}]`)})`;
}

export function parseJsonBody(text: string): unknown {
  // A BOM is not JSON, but harmless; fastify's parser dropped it too.
  const json = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  if (json.trim() === "") throw new BadBodyError("body is empty: expected an admission.k8s.io/v1 AdmissionReview as JSON");
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch (error) {
    throw new BadBodyError(`body is not valid JSON: ${error instanceof Error ? error.message : String(error)}`);
  }
  const forbidden = SUSPICIOUS.test(json) ? forbiddenKey(value) : undefined;
  if (forbidden !== undefined) throw new BadBodyError(`${forbidden} is not accepted`);
  return value;
}

interface Frame {
  value: unknown;
  parent: Frame | undefined;
  segment: string | number | undefined;
}

/** Where the first "__proto__" key, or "constructor" key holding a "prototype", is. */
function forbiddenKey(root: unknown): string | undefined {
  // Iterative, and paths built only for the culprit: the body may nest deeper than the stack allows.
  const stack: Frame[] = [{ value: root, parent: undefined, segment: undefined }];
  for (let frame = stack.pop(); frame !== undefined; frame = stack.pop()) {
    const { value } = frame;
    if (typeof value !== "object" || value === null) continue;
    if (Array.isArray(value)) {
      value.forEach((item, index) => stack.push({ value: item, parent: frame, segment: index }));
      continue;
    }
    if (Object.hasOwn(value, "__proto__")) return `${pathOf(frame)}: the key "__proto__"`;
    const constructor = (value as Record<string, unknown>).constructor;
    if (Object.hasOwn(value, "constructor") && typeof constructor === "object" && constructor !== null && Object.hasOwn(constructor, "prototype")) {
      return `${pathOf(frame)}: a "constructor" key holding "prototype"`;
    }
    for (const [key, child] of Object.entries(value)) stack.push({ value: child, parent: frame, segment: key });
  }
  return undefined;
}

function pathOf(frame: Frame): string {
  const segments: (string | number)[] = [];
  for (let at: Frame | undefined = frame; at?.segment !== undefined; at = at.parent) segments.push(at.segment);
  const path = segments.reverse().reduce<string>((built, segment) => (typeof segment === "number" ? indexPath(built, segment) : childPath(built, segment)), "");
  return path === "" ? "body" : path;
}
