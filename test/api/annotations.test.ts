// The annotations size limit is counted in bytes of UTF-8, as apimachinery counts it, even
// where the check first looks only at how many characters there are.
import { describe, expect, it } from "vitest";
import { ANNOTATIONS_SIZE_LIMIT, annotationsTooLong } from "../../src/api/annotations.ts";

describe("annotationsTooLong", () => {
  it("counts keys and values together, up to the limit inclusive", () => {
    const key = "k";
    expect(annotationsTooLong({ [key]: "x".repeat(ANNOTATIONS_SIZE_LIMIT - key.length) })).toBe(false);
    expect(annotationsTooLong({ [key]: "x".repeat(ANNOTATIONS_SIZE_LIMIT - key.length + 1) })).toBe(true);
    expect(annotationsTooLong({ a: "x".repeat(ANNOTATIONS_SIZE_LIMIT / 2), b: "y".repeat(ANNOTATIONS_SIZE_LIMIT / 2) })).toBe(true);
  });

  it("counts multi-byte characters in bytes", () => {
    // "é" is 2 bytes and "€" 3: fewer characters than the limit, more bytes than it.
    expect(annotationsTooLong({ a: "é".repeat(ANNOTATIONS_SIZE_LIMIT / 2) })).toBe(true);
    expect(annotationsTooLong({ a: "é".repeat(ANNOTATIONS_SIZE_LIMIT / 2 - 1) })).toBe(false);
    expect(annotationsTooLong({ a: "€".repeat(ANNOTATIONS_SIZE_LIMIT / 3 + 1) })).toBe(true);
    // A character outside the BMP is two UTF-16 units and 4 bytes.
    expect(annotationsTooLong({ a: "😀".repeat(ANNOTATIONS_SIZE_LIMIT / 4 - 1) })).toBe(false);
    expect(annotationsTooLong({ a: "😀".repeat(ANNOTATIONS_SIZE_LIMIT / 4) })).toBe(true);
  });

  it("leaves out values that are not strings (they are the API server's to refuse)", () => {
    expect(annotationsTooLong({ a: 1, b: null })).toBe(false);
  });
});
