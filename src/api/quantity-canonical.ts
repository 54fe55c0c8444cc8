// A quantity written as apimachinery's resource.Quantity prints it (its canonical form): what a
// Go controller sees after reading "1024Mi" is "1Gi". Needed where a hash must match one a Go
// controller computes from the same object (kuperator's claim template hash).
import { parseQuantity } from "./quantity.ts";

const BINARY_SUFFIXES = ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"] as const;
const DECIMAL_SUFFIXES: ReadonlyMap<number, string> = new Map([[-9, "n"], [-6, "u"], [-3, "m"], [0, ""], [3, "k"], [6, "M"], [9, "G"], [12, "T"], [15, "P"], [18, "E"]]);
const NANO = 10n ** 9n;

/**
 * The canonical text of a quantity, or undefined when `value` is not one. The format follows
 * the suffix it was written with (binary, decimal or exponent), as Go's does; binary values
 * under 1024 or with a fraction print as decimal; values finer than 1n round up in magnitude.
 */
export function canonicalQuantity(value: unknown): string | undefined {
  const quantity = parseQuantity(value);
  if (quantity === undefined) return undefined;
  const text = String(value);
  const format = /[KMGTPE]i$/.test(text) ? "binary" : /\d[eE][+-]?\d+$/.test(text) ? "exponent" : "decimal";
  const negative = quantity.numerator < 0n;
  const magnitude = negative ? -quantity.numerator : quantity.numerator;
  const nanos = (magnitude * NANO + quantity.denominator - 1n) / quantity.denominator;
  if (nanos === 0n) return "0";
  const sign = negative ? "-" : "";
  if (format === "binary" && nanos % NANO === 0n && nanos >= 1024n * NANO) {
    let whole = nanos / NANO;
    let power = 0;
    while (power < BINARY_SUFFIXES.length - 1 && whole % 1024n === 0n) {
      whole /= 1024n;
      power++;
    }
    return `${sign}${whole}${BINARY_SUFFIXES[power]}`;
  }
  let mantissa = nanos;
  let exponent = -9;
  while (exponent < 18 && mantissa % 1000n === 0n) {
    mantissa /= 1000n;
    exponent += 3;
  }
  const suffix = format === "exponent" ? (exponent === 0 ? "" : `e${exponent}`) : DECIMAL_SUFFIXES.get(exponent)!;
  return `${sign}${mantissa}${suffix}`;
}
