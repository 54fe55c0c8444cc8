import { ApiException } from "@kubernetes/client-node";
import { describe, expect, it } from "vitest";
import { retryOnConflict, updateFresh } from "../../src/kube/retry-on-conflict.ts";

const conflict = () => new ApiException(409, "Conflict", JSON.stringify({ reason: "Conflict", code: 409 }), {});
const noSleep = { sleep: () => Promise.resolve() };

describe("retryOnConflict", () => {
  it("retries a conflicting write until it succeeds", async () => {
    let attempts = 0;
    const result = await retryOnConflict(() => (++attempts < 3 ? Promise.reject(conflict()) : Promise.resolve("ok")), noSleep);
    expect(result).toBe("ok");
    expect(attempts).toBe(3);
  });

  it("gives up after the configured number of steps with the last conflict", async () => {
    let attempts = 0;
    await expect(retryOnConflict(() => (attempts++, Promise.reject(conflict())), { ...noSleep, steps: 4 })).rejects.toMatchObject({ code: 409 });
    expect(attempts).toBe(4);
  });

  it("does not retry other errors", async () => {
    let attempts = 0;
    await expect(retryOnConflict(() => (attempts++, Promise.reject(new ApiException(422, "Invalid", "{}", {}))), noSleep)).rejects.toMatchObject({ code: 422 });
    expect(attempts).toBe(1);
  });

  it("updateFresh computes every attempt from a fresh read", async () => {
    let stored = { resourceVersion: 1, value: 10 };
    const seen: number[] = [];
    const result = await updateFresh(
      () => Promise.resolve({ ...stored }),
      (fresh) => {
        seen.push(fresh.resourceVersion);
        // Someone else writes between our first read and our write.
        if (fresh.resourceVersion === 1) {
          stored = { resourceVersion: 2, value: 20 };
          return Promise.reject(conflict());
        }
        stored = { resourceVersion: fresh.resourceVersion + 1, value: fresh.value + 1 };
        return Promise.resolve(stored.value);
      },
      noSleep,
    );
    expect(seen).toEqual([1, 2]);
    expect(result).toBe(21);
  });
});
