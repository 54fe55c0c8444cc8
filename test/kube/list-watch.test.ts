import { ApiException } from "@kubernetes/client-node";
import { describe, expect, it } from "vitest";
import { restListWatch } from "../../src/kube/list-watch.ts";
import type { ConfigMap } from "../../src/kube/objects.ts";
import { resources } from "../../src/kube/resources.ts";

type Query = Record<string, unknown>;

/** Pages of config maps as the API server sends list items: without kind or apiVersion. */
function pagedTransport(pages: readonly string[][], options: { expireContinue?: boolean } = {}) {
  const requests: Query[] = [];
  const transport = {
    getJson(_path: string, query: Query = {}): Promise<unknown> {
      requests.push(query);
      if (options.expireContinue === true && query.continue !== undefined) {
        const status = { kind: "Status", apiVersion: "v1", status: "Failure", code: 410, reason: "Expired", message: "continue token expired" };
        return Promise.reject(new ApiException(410, "HTTP error", JSON.stringify(status), {}));
      }
      const unpaged = query.limit === undefined;
      const index = unpaged ? 0 : typeof query.continue === "string" ? Number(query.continue) : 0;
      const names = unpaged ? pages.flat() : pages[index]!;
      const last = unpaged || index === pages.length - 1;
      return Promise.resolve({
        metadata: { resourceVersion: "42", ...(last ? {} : { continue: String(index + 1) }) },
        items: names.map((name) => ({ metadata: { name, namespace: "default", managedFields: [{ manager: "kubectl" }] }, data: { big: name.repeat(100) } })),
      });
    },
    streamLines: () => Promise.reject(new Error("not used")),
  };
  return { transport, requests };
}

describe("restListWatch's list", () => {
  it("prepares every object as soon as its page has arrived, before the next page is asked for", async () => {
    const { transport, requests } = pagedTransport([["a", "b"], ["c", "d"], ["e"]]);
    const prepared: { name: string | undefined; pagesAskedFor: number; kind: string | undefined }[] = [];
    const list = await restListWatch<ConfigMap>(transport, resources.configMaps, { pageSize: 2 }).list(new AbortController().signal, (item) => {
      prepared.push({ name: item.metadata?.name, pagesAskedFor: requests.length, kind: item.kind });
      return { apiVersion: item.apiVersion, kind: item.kind, metadata: { name: item.metadata?.name, namespace: item.metadata?.namespace } };
    });
    expect(prepared).toEqual([
      { name: "a", pagesAskedFor: 1, kind: "ConfigMap" },
      { name: "b", pagesAskedFor: 1, kind: "ConfigMap" },
      { name: "c", pagesAskedFor: 2, kind: "ConfigMap" },
      { name: "d", pagesAskedFor: 2, kind: "ConfigMap" },
      { name: "e", pagesAskedFor: 3, kind: "ConfigMap" },
    ]);
    // What the list hands back is what prepare made of each object, nothing of the raw objects.
    expect(list.items).toEqual(["a", "b", "c", "d", "e"].map((name) => ({ apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace: "default" } })));
    expect(list.resourceVersion).toBe("42");
    expect(requests.map((query) => [query.limit, query.continue])).toEqual([[2, undefined], [2, "1"], [2, "2"]]);
  });

  it("prepares the objects of the unpaged list it falls back to when a continue token expires", async () => {
    const { transport, requests } = pagedTransport([["a"], ["b"]], { expireContinue: true });
    const prepared: string[] = [];
    const list = await restListWatch<ConfigMap>(transport, resources.configMaps, { pageSize: 1 }).list(new AbortController().signal, (item) => {
      prepared.push(item.metadata!.name!);
      return item;
    });
    expect(requests.map((query) => [query.limit, query.continue])).toEqual([[1, undefined], [1, "1"], [undefined, undefined]]);
    // The first page was prepared once before the token expired, then every object of the full list.
    expect(prepared).toEqual(["a", "a", "b"]);
    expect(list.items.map((item) => item.metadata?.name)).toEqual(["a", "b"]);
  });
});
