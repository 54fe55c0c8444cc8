// What a rendered pod records: label keys valid for every legal decoration name, and a
// revisions annotation that is written canonically and read tolerantly.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { isDns1123Subdomain, isQualifiedName } from "../../src/api/names.ts";
import { decorationLabelKey, formatRevisionsAnnotation, parseRevisionsAnnotation, recordedRevisions, REVISIONS_ANNOTATION } from "../../src/decoration/recording.ts";

const dnsLabel = fc.stringMatching(/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/);
/** Any legal object name: a DNS-1123 subdomain of up to 253 characters. */
const decorationName = fc.array(dnsLabel, { minLength: 1, maxLength: 6 }).map((labels) => labels.join(".").slice(0, 253)).filter(isDns1123Subdomain);

describe("decorationLabelKey", () => {
  it("is poddecoration.kusionstack.io/pd-<name> when that fits", () => {
    expect(decorationLabelKey("logging")).toBe("poddecoration.kusionstack.io/pd-logging");
    expect(decorationLabelKey("a.b-c")).toBe("poddecoration.kusionstack.io/pd-a.b-c");
    expect(decorationLabelKey("x".repeat(60))).toBe(`poddecoration.kusionstack.io/pd-${"x".repeat(60)}`);
  });

  it("is a valid label key for every legal decoration name, up to 253 characters", () => {
    fc.assert(fc.property(decorationName, (name) => {
      expect(isQualifiedName(decorationLabelKey(name)), decorationLabelKey(name)).toBe(true);
    }), { numRuns: 500 });
    expect(isQualifiedName(decorationLabelKey(`${"a".repeat(63)}.${"b".repeat(63)}.${"c".repeat(63)}.${"d".repeat(61)}`))).toBe(true);
  });

  it("keeps distinct long names distinct", () => {
    const base = "x".repeat(70);
    expect(decorationLabelKey(`${base}-one`)).not.toBe(decorationLabelKey(`${base}-two`));
    expect(decorationLabelKey(`${base}-one`)).toBe(decorationLabelKey(`${base}-one`));
  });

  it("stays a valid key even for names no API server would accept", () => {
    for (const name of ["Upper_Case", "-leading", "trailing.", "with/slash", "", "ünïcode"]) {
      expect(isQualifiedName(decorationLabelKey(name)), name).toBe(true);
    }
  });
});

describe("the revisions annotation", () => {
  it("is written sorted by name, one entry per name", () => {
    expect(formatRevisionsAnnotation([
      { name: "b", revision: "b-1" },
      { name: "a", revision: "a-1" },
      { name: "b", revision: "b-2" },
    ])).toBe('[{"name":"a","revision":"a-1"},{"name":"b","revision":"b-2"}]');
  });

  it("is the JSON of its entries as objects, for any text and for none", () => {
    const revisions = [{ name: 'q"uote\\', revision: "ünï\u2028" }, { name: "a", revision: "" }];
    expect(formatRevisionsAnnotation(revisions)).toBe(JSON.stringify([revisions[1], revisions[0]]));
    expect(formatRevisionsAnnotation([])).toBe("[]");
  });

  it("round-trips", () => {
    const revisions = [{ name: "a", revision: "a-1" }, { name: "z.y", revision: "z.y-2" }];
    expect(parseRevisionsAnnotation(formatRevisionsAnnotation(revisions))).toEqual({ revisions, warnings: [] });
  });

  it("reads anything without throwing, keeping the usable entries and warning about the rest", () => {
    expect(parseRevisionsAnnotation(undefined)).toEqual({ revisions: [], warnings: [] });
    expect(parseRevisionsAnnotation("{")).toEqual({ revisions: [], warnings: [`annotation ${REVISIONS_ANNOTATION} is not JSON; treated as empty`] });
    expect(parseRevisionsAnnotation('{"name":"a"}').warnings).toEqual([`annotation ${REVISIONS_ANNOTATION} is not a JSON array; treated as empty`]);
    expect(parseRevisionsAnnotation('[{"name":"a","revision":"a-1"},null,{"name":"","revision":"x"}]')).toEqual({
      revisions: [{ name: "a", revision: "a-1" }],
      warnings: [
        `annotation ${REVISIONS_ANNOTATION}[1] is not {"name": string, "revision": string}; ignored`,
        `annotation ${REVISIONS_ANNOTATION}[2] is not {"name": string, "revision": string}; ignored`,
      ],
    });
    fc.assert(fc.property(fc.string(), (text) => {
      parseRevisionsAnnotation(text);
    }));
  });
});

describe("recordedRevisions", () => {
  const recording = (revisions: { name: string; revision: string }[]) => ({ metadata: { annotations: { [REVISIONS_ANNOTATION]: formatRevisionsAnnotation(revisions) } } });

  it("maps each recorded name to its revision; null for a pod without the annotation", () => {
    expect(recordedRevisions(recording([{ name: "mesh", revision: "mesh-1" }, { name: "certs", revision: "certs-2" }]))).toEqual(new Map([["certs", "certs-2"], ["mesh", "mesh-1"]]));
    expect(recordedRevisions({ metadata: { annotations: { [REVISIONS_ANNOTATION]: "[{" } } })).toEqual(new Map());
    expect(recordedRevisions({ metadata: {} })).toBeNull();
  });

  it("reads every pod right past the bound on the texts its pods share", () => {
    // More distinct names and revisions than are kept shared: the sharing starts over, the answers stay.
    for (let index = 0; index < 20_000; index++) {
      const name = `pd-${index}`;
      expect(recordedRevisions(recording([{ name, revision: `${name}-1` }, { name: "mesh", revision: "mesh-1" }]))).toEqual(new Map([[name, `${name}-1`], ["mesh", "mesh-1"]]));
    }
  });
});
