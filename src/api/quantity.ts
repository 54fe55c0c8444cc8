// Kubernetes resource quantities (apimachinery's resource.Quantity): the grammar, and exact
// values for comparing requests with limits. A quantity is a decimal number with a binary
// (Ki…Ei), decimal (m, k…E) or exponent (e3, E-2) suffix; values are kept as exact fractions
// of BigInts, because "0.1" and "100m" must compare equal.

// <signedNumber><suffix>, as resource.ParseQuantity reads it.
const QUANTITY = /^([+-]?)(\d+\.?\d*|\.\d+)(Ki|Mi|Gi|Ti|Pi|Ei|m|k|M|G|T|P|E|[eE][+-]?\d+)?$/;

const BINARY: Readonly<Record<string, bigint>> = { Ki: 1n << 10n, Mi: 1n << 20n, Gi: 1n << 30n, Ti: 1n << 40n, Pi: 1n << 50n, Ei: 1n << 60n };
const DECIMAL_EXPONENT: Readonly<Record<string, number>> = { m: -3, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };

/** An exact value: numerator / denominator, denominator > 0. */
export interface Quantity {
  numerator: bigint;
  denominator: bigint;
}

/** The quantity `text` denotes, or undefined when it is not one. Numbers (YAML `cpu: 1`) are read as their decimal text. */
export function parseQuantity(value: unknown): Quantity | undefined {
  const text = typeof value === "number" && Number.isFinite(value) ? String(value) : value;
  if (typeof text !== "string") return undefined;
  const match = QUANTITY.exec(text);
  if (match === null) return undefined;
  const [, sign = "", number = "", suffix = ""] = match;
  const [whole = "", fraction = ""] = number.split(".");
  let numerator = BigInt(`${whole}${fraction}` === "" ? "0" : `${whole}${fraction}`);
  let denominator = 10n ** BigInt(fraction.length);
  if (suffix in BINARY) {
    numerator *= BINARY[suffix]!;
  } else {
    const exponent = suffix === "" ? 0 : suffix in DECIMAL_EXPONENT ? DECIMAL_EXPONENT[suffix]! : Number(suffix.slice(1));
    // Exponents beyond what any resource could mean are refused rather than computed.
    if (Math.abs(exponent) > 64) return undefined;
    if (exponent >= 0) numerator *= 10n ** BigInt(exponent);
    else denominator *= 10n ** BigInt(-exponent);
  }
  return { numerator: sign === "-" ? -numerator : numerator, denominator };
}

/** -1, 0 or 1 as a is less than, equal to or greater than b. */
export function compareQuantities(a: Quantity, b: Quantity): number {
  const left = a.numerator * b.denominator;
  const right = b.numerator * a.denominator;
  return left < right ? -1 : left > right ? 1 : 0;
}

export function isNegative(quantity: Quantity): boolean {
  return quantity.numerator < 0n;
}

/** Whether the quantity is a whole number (what integer resources, like extended ones, require). */
export function isWholeNumber(quantity: Quantity): boolean {
  return quantity.numerator % quantity.denominator === 0n;
}
