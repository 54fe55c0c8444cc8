// Resource quantities as Kubernetes parses them, compared exactly.
import { describe, expect, it } from "vitest";
import { addQuantities, compareQuantities, isNegative, isOverlongQuantity, isWholeNumber, parseQuantity, QUANTITY_MAX_LENGTH } from "../../src/api/quantity.ts";

const q = (text: string | number) => {
  const parsed = parseQuantity(text);
  if (parsed === undefined) throw new Error(`${text} is not a quantity`);
  return parsed;
};

describe("parseQuantity", () => {
  it.each(["1", "0", "100m", "0.5", ".5", "1.", "+1", "-1", "64Mi", "1Gi", "2Ki", "1k", "1M", "1e3", "1E-2", "1.5Gi", "100n", "250u", 0.25, 2])("reads %s", (text) => {
    expect(parseQuantity(text)).toBeDefined();
  });

  it.each(["", "abc", "1.2.3", "1Kb", "Mi", "1 Gi", "1e", "1e+", "--1", "1mi", "1e1000", "1toString", "1__proto__", "1constructor", ".", "+", "1.e3x", null, true, {}])("refuses %s", (text) => {
    expect(parseQuantity(text)).toBeUndefined();
  });

  it.each([
    ["0.1", "100m", 0],
    ["1", "1000m", 0],
    ["1Gi", "1073741824", 0],
    ["1G", "1Gi", -1],
    ["1e3", "1k", 0],
    ["1.5", "1501m", -1],
    ["2", "1999m", 1],
    ["1000n", "1u", 0],
    ["1000u", "1m", 0],
    ["500u", "1m", -1],
    ["1n", "0", 1],
  ] as const)("compares %s with %s as %d", (a, b, order) => {
    expect(compareQuantities(q(a), q(b))).toBe(order);
  });

  it("tells negative and whole values", () => {
    expect(isNegative(q("-1m"))).toBe(true);
    expect(isNegative(q("0"))).toBe(false);
    expect(isWholeNumber(q("2000m"))).toBe(true);
    expect(isWholeNumber(q("1.5"))).toBe(false);
    expect(isWholeNumber(q("1Ki"))).toBe(true);
  });

  it("reads a quantity of QUANTITY_MAX_LENGTH characters and refuses a longer one as overlong", () => {
    const longest = `0.${"0".repeat(QUANTITY_MAX_LENGTH - 4)}1k`;
    expect(longest).toHaveLength(QUANTITY_MAX_LENGTH);
    expect(compareQuantities(q(longest), q(`0.${"0".repeat(QUANTITY_MAX_LENGTH - 7)}1`))).toBe(0);
    expect(isOverlongQuantity(longest)).toBe(false);
    expect(parseQuantity(`${longest}0`)).toBeUndefined();
    expect(isOverlongQuantity(`${longest}0`)).toBe(true);
  });

  it("adds exactly, keeping the finer denominator", () => {
    const sum = addQuantities(q("1.5"), q("250m"));
    expect(compareQuantities(sum, q("1750m"))).toBe(0);
    expect(sum.denominator).toBe(1000n);
    expect(compareQuantities(addQuantities(q("1Ki"), q("-24")), q("1000"))).toBe(0);
  });
});
