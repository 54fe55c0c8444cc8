// Kubernetes resource quantities (apimachinery's resource.Quantity): the grammar, and exact
// values for comparing requests with limits. A quantity is a decimal number with a binary
// (Ki…Ei), decimal (n, u, m, k…E) or exponent (e3, E-2) suffix; values are kept as exact fractions
// of BigInts, because "0.1" and "100m" must compare equal.

/**
 * The longest text read as a quantity. resource.ParseQuantity sets no length of its own, but
 * Kubernetes holds no quantity beyond 2^63-1 in magnitude nor finer than 10^-9 (it caps and
 * rounds), so every quantity that means something is under 40 characters; 128 leaves room for
 * padding zeros and keeps the exact arithmetic below (BigInts of every digit) cheap on the
 * webhook's one event loop (DESIGN §10).
 */
export const QUANTITY_MAX_LENGTH = 128;

const BINARY: ReadonlyMap<string, bigint> = new Map([["Ki", 1n << 10n], ["Mi", 1n << 20n], ["Gi", 1n << 30n], ["Ti", 1n << 40n], ["Pi", 1n << 50n], ["Ei", 1n << 60n]]);
const DECIMAL_EXPONENT: ReadonlyMap<string, number> = new Map([["n", -9], ["u", -6], ["m", -3], ["k", 3], ["M", 6], ["G", 9], ["T", 12], ["P", 15], ["E", 18]]);

/** An exact value: numerator / denominator, denominator a power of ten. */
export interface Quantity {
  numerator: bigint;
  denominator: bigint;
}

/** The quantity `text` denotes, or undefined when it is not one. Numbers (YAML `cpu: 1`) are read as their decimal text. */
export function parseQuantity(value: unknown): Quantity | undefined {
  const text = typeof value === "number" && Number.isFinite(value) ? String(value) : value;
  if (typeof text !== "string" || text.length > QUANTITY_MAX_LENGTH) return undefined;
  const parts = quantityParts(text);
  if (parts === undefined) return undefined;
  const { negative, whole, fraction, suffix } = parts;
  let numerator = BigInt(`${whole}${fraction}` === "" ? "0" : `${whole}${fraction}`);
  let denominator = 10n ** BigInt(fraction.length);
  const binary = BINARY.get(suffix);
  if (binary !== undefined) {
    numerator *= binary;
  } else {
    const exponent = suffix === "" ? 0 : DECIMAL_EXPONENT.get(suffix) ?? Number(suffix.slice(1));
    // Exponents beyond what any resource could mean are refused rather than computed.
    if (Math.abs(exponent) > 64) return undefined;
    if (exponent >= 0) numerator *= 10n ** BigInt(exponent);
    else denominator *= 10n ** BigInt(-exponent);
  }
  return { numerator: negative ? -numerator : numerator, denominator };
}

/** Whether `text` is too long to be read as a quantity (what to tell its author instead of "not a quantity"). */
export function isOverlongQuantity(value: unknown): boolean {
  return typeof value === "string" && value.length > QUANTITY_MAX_LENGTH;
}

interface QuantityParts {
  negative: boolean;
  whole: string;
  fraction: string;
  suffix: string;
}

/**
 * `<sign?><digits>[.<digits>]<suffix>` read in one pass, as resource.ParseQuantity reads it:
 * a hand scanner rather than a regular expression, whose digit runs a backtracking engine
 * would retry from every split (quadratic in the length of the number).
 */
function quantityParts(text: string): QuantityParts | undefined {
  let at = 0;
  const negative = text[0] === "-";
  if (negative || text[0] === "+") at++;
  const wholeStart = at;
  at = digitsEnd(text, at);
  const whole = text.slice(wholeStart, at);
  let fraction = "";
  if (text[at] === ".") {
    const fractionStart = at + 1;
    at = digitsEnd(text, fractionStart);
    fraction = text.slice(fractionStart, at);
  }
  // "5", "5.", "5.25" and ".25" are numbers; "." and "" are not.
  if (whole === "" && fraction === "") return undefined;
  const suffix = text.slice(at);
  return isSuffix(suffix) ? { negative, whole, fraction, suffix } : undefined;
}

/** "", a binary or decimal SI suffix, or an exponent: `e` or `E`, an optional sign, digits. */
function isSuffix(suffix: string): boolean {
  if (suffix === "" || BINARY.has(suffix) || DECIMAL_EXPONENT.has(suffix)) return true;
  if (suffix[0] !== "e" && suffix[0] !== "E") return false;
  const digitsStart = suffix[1] === "+" || suffix[1] === "-" ? 2 : 1;
  return digitsStart < suffix.length && digitsEnd(suffix, digitsStart) === suffix.length;
}

/** The index after the run of ASCII digits that starts at `at`. */
function digitsEnd(text: string, at: number): number {
  let end = at;
  while (end < text.length) {
    const code = text.charCodeAt(end);
    if (code < 0x30 || code > 0x39) break;
    end++;
  }
  return end;
}

/** -1, 0 or 1 as a is less than, equal to or greater than b. */
export function compareQuantities(a: Quantity, b: Quantity): number {
  const left = a.numerator * b.denominator;
  const right = b.numerator * a.denominator;
  return left < right ? -1 : left > right ? 1 : 0;
}

/**
 * a + b, exactly. Both denominators are powers of ten, so the larger is a multiple of the
 * smaller: the sum keeps it, and a sum over many containers stays the size of its finest
 * term instead of multiplying every denominator together.
 */
export function addQuantities(a: Quantity, b: Quantity): Quantity {
  if (a.denominator < b.denominator) return addQuantities(b, a);
  return { numerator: a.numerator + b.numerator * (a.denominator / b.denominator), denominator: a.denominator };
}

export function isNegative(quantity: Quantity): boolean {
  return quantity.numerator < 0n;
}

/** Whether the quantity is a whole number (what integer resources, like extended ones, require). */
export function isWholeNumber(quantity: Quantity): boolean {
  return quantity.numerator % quantity.denominator === 0n;
}
