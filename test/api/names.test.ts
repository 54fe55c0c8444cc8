// The name grammars are read by one-pass scanners at runtime and by the CRD patterns in the API
// server: both must accept exactly the same strings.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { DNS1123_LABEL, DNS1123_SUBDOMAIN, LABEL_VALUE, matchesDns1123Label, matchesDns1123Subdomain, matchesLabelValue } from "../../src/api/names.ts";

/** Strings made of the characters that decide these grammars, and a few that are never allowed. */
const nameLike = fc.array(fc.constantFrom("a", "z", "0", "9", "-", ".", "_", "A", "Z", "/", " ", "é", "`", "{"), { maxLength: 12 }).map((characters) => characters.join(""));

describe("the name scanners", () => {
  it.each([
    ["DNS-1123 label", matchesDns1123Label, DNS1123_LABEL],
    ["DNS-1123 subdomain", matchesDns1123Subdomain, DNS1123_SUBDOMAIN],
    ["label value", matchesLabelValue, LABEL_VALUE],
  ] as const)("accept a %s exactly when the CRD pattern does", (_grammar, scanner, pattern) => {
    fc.assert(fc.property(nameLike, (value) => scanner(value) === pattern.test(value)), { numRuns: 5000 });
  });

  it.each([
    ["a", true, true, true],
    ["a-b.c-d", false, true, true],
    ["a..b", false, false, true],
    ["-a", false, false, false],
    ["a.", false, false, false],
    ["", false, false, true],
    ["A_b", false, false, true],
  ] as const)("read %j as label %s, subdomain %s, label value %s", (value, label, subdomain, labelValue) => {
    expect([matchesDns1123Label(value), matchesDns1123Subdomain(value), matchesLabelValue(value)]).toEqual([label, subdomain, labelValue]);
  });
});
