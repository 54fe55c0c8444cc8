import { describe, expect, it } from "vitest";
import { hashRevisionData } from "../../src/revision/hash.ts";
import { planRevision, revisionsToPrune, type StoredRevision } from "../../src/revision/history.ts";
import { revisionName } from "../../src/revision/name.ts";

const data = (image: string) => ({ template: { containers: [{ name: "sidecar", image }] }, injectStrategy: { group: "", weight: 0 } });
const stored = (image: string, revision: number, collisionCount = 0): StoredRevision => ({ name: revisionName("logging", hashRevisionData(data(image), collisionCount)), revision, data: data(image) });

describe("planRevision", () => {
  it("creates the first revision as number 1 under the owner's name and the data's hash", () => {
    expect(planRevision("logging", data("v1"), 0, [])).toEqual({ kind: "create", name: stored("v1", 1).name, hash: hashRevisionData(data("v1")), revision: 1 });
  });

  it("reuses the newest revision when the data is unchanged, whatever the key order", () => {
    const reordered = { injectStrategy: { weight: 0, group: "" }, template: { containers: [{ image: "v1", name: "sidecar" }] } };
    expect(planRevision("logging", reordered, 0, [stored("v1", 1)])).toEqual({ kind: "reuse", name: stored("v1", 1).name });
  });

  it("creates the next number for new data", () => {
    expect(planRevision("logging", data("v3"), 0, [stored("v1", 1), stored("v2", 2)])).toMatchObject({ kind: "create", revision: 3 });
  });

  it("rolls back to an older revision by bumping its number and keeping its name", () => {
    expect(planRevision("logging", data("v1"), 0, [stored("v1", 1), stored("v2", 2)])).toEqual({ kind: "rollback", name: stored("v1", 1).name, revision: 3 });
  });

  it("finds equal data stored under an earlier collision count", () => {
    expect(planRevision("logging", data("v1"), 1, [stored("v1", 4, 0)])).toEqual({ kind: "reuse", name: stored("v1", 4).name });
  });

  it("reports a collision when the name is taken by other data", () => {
    const squatter = { ...stored("v2", 1), name: stored("v1", 1).name };
    expect(planRevision("logging", data("v1"), 0, [squatter])).toEqual({ kind: "collision", name: squatter.name });
    expect(planRevision("logging", data("v1"), 1, [squatter])).toMatchObject({ kind: "create", name: stored("v1", 1, 1).name });
  });
});

describe("revisionsToPrune", () => {
  const history = [stored("v1", 1), stored("v2", 2), stored("v3", 3), stored("v4", 4), stored("v5", 5)];

  it("deletes the oldest revisions beyond the limit", () => {
    expect(revisionsToPrune(history, 2, new Set([stored("v5", 5).name]))).toEqual([stored("v1", 1).name, stored("v2", 2).name, stored("v3", 3).name]);
  });

  it("never deletes a protected revision, even when that leaves more than the limit", () => {
    const protectedNames = new Set([stored("v1", 1).name, stored("v3", 3).name, stored("v5", 5).name]);
    expect(revisionsToPrune(history, 2, protectedNames)).toEqual([stored("v2", 2).name, stored("v4", 4).name]);
  });

  it("keeps everything within the limit", () => {
    expect(revisionsToPrune(history, 5, new Set())).toEqual([]);
    expect(revisionsToPrune(history, 20, new Set())).toEqual([]);
  });
});
