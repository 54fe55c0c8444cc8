import { describe, expect, it } from "vitest";
import { pointerKeys, pointerSegment } from "../../src/api/json-pointer.ts";

describe("JSON Pointer keys", () => {
  it("reads the keys a pointer names, unescaping ~1 and ~0, and none for the whole document", () => {
    expect(pointerKeys("")).toEqual([]);
    expect(pointerKeys("/")).toEqual([""]);
    expect(pointerKeys("/metadata/labels/app.kubernetes.io~1name")).toEqual(["metadata", "labels", "app.kubernetes.io/name"]);
    expect(pointerKeys("/a~01/b~10")).toEqual(["a~1", "b/0"]);
  });

  it("is the inverse of writing each key as a segment", () => {
    const keys = ["spec", "containers", "0", "a/b~c", "~1", ""];
    expect(pointerKeys(keys.map((key) => `/${pointerSegment(key)}`).join(""))).toEqual(keys);
  });
});
