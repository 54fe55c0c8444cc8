import { V1ListMeta, V1MicroTime, V1ObjectMeta, V1Pod, V1PodList, V1PodSpec } from "@kubernetes/client-node";
import { describe, expect, it } from "vitest";
import { listItems, toPlain } from "../../src/kube/plain.ts";

function pod(): V1Pod {
  const value = new V1Pod();
  value.metadata = Object.assign(new V1ObjectMeta(), { name: "p", namespace: "ns", creationTimestamp: new Date("2026-03-04T05:06:07Z"), labels: { app: "web" } });
  value.spec = Object.assign(new V1PodSpec(), { containers: [{ name: "main", image: "nginx" }], nodeName: undefined });
  return value;
}

describe("toPlain", () => {
  it("turns model classes into plain objects and Dates into the API server's RFC 3339 seconds", () => {
    const plain = toPlain(pod());
    expect(Object.getPrototypeOf(plain)).toBe(Object.prototype);
    expect(Object.getPrototypeOf(plain.metadata)).toBe(Object.prototype);
    expect(plain.metadata?.creationTimestamp).toBe("2026-03-04T05:06:07Z");
    expect(JSON.parse(JSON.stringify(plain))).toEqual(plain);
  });

  it("drops undefined properties so a plain object equals its JSON round trip", () => {
    const plain = toPlain(pod());
    expect("nodeName" in (plain.spec ?? {})).toBe(false);
    expect(plain).toEqual({ metadata: { name: "p", namespace: "ns", creationTimestamp: "2026-03-04T05:06:07Z", labels: { app: "web" } }, spec: { containers: [{ name: "main", image: "nginx" }] } });
  });

  it("keeps MicroTime's six fractional digits", () => {
    expect(toPlain({ renewTime: new V1MicroTime("2026-03-04T05:06:07.123Z") })).toEqual({ renewTime: "2026-03-04T05:06:07.123000Z" });
  });

  it("restores wire names the generated models rename", () => {
    const meta = Object.assign(new V1ListMeta(), { _continue: "token", resourceVersion: "5" });
    expect(toPlain(meta)).toEqual({ continue: "token", resourceVersion: "5" });
  });

  it("leaves plain JSON as it is", () => {
    const raw = { a: [1, "x", null, { b: true }], c: { "x-kubernetes-thing": 1 } };
    expect(toPlain(raw)).toEqual(raw);
    expect(toPlain(raw)).not.toBe(raw);
  });

  it("gives list items the kind and apiVersion a watch event would carry", () => {
    const list = Object.assign(new V1PodList(), { items: [pod()] });
    const [item] = listItems(list, "v1", "Pod");
    expect(item).toMatchObject({ apiVersion: "v1", kind: "Pod", metadata: { name: "p", creationTimestamp: "2026-03-04T05:06:07Z" } });
  });
});
