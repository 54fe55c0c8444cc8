import { describe, expect, it } from "vitest";
import { AdmissionLimits, deadlineFor, goDurationMs } from "../../src/webhook/admission-limits.ts";

describe("admission limits", () => {
  it("lets in at most maxInFlight requests, and another once one is released", () => {
    const limits = new AdmissionLimits({ maxInFlight: 2 });
    const first = limits.admit(10, undefined);
    const second = limits.admit(10, undefined);
    expect("admission" in first && "admission" in second).toBe(true);
    expect(limits.admit(10, undefined)).toEqual({ refused: "2 admission requests are in flight (at most 2)" });
    if ("admission" in first) {
      first.admission.release();
      first.admission.release();
    }
    expect(limits.inFlight).toBe(1);
    expect("admission" in limits.admit(10, undefined)).toBe(true);
  });

  it("lets in at most maxInFlightBytes of bodies, but always one request however large", () => {
    const limits = new AdmissionLimits({ maxInFlightBytes: 4 * 1048576 });
    const huge = limits.admit(9 * 1048576, undefined);
    expect("admission" in huge).toBe(true);
    expect(limits.admit(1, undefined)).toEqual({ refused: "9.0 MiB of admission requests are in flight and this one has 0.0 MiB (at most 4.0 MiB at once)" });
    if ("admission" in huge) huge.admission.release();
    expect("admission" in limits.admit(3 * 1048576, undefined)).toBe(true);
    expect("refused" in limits.admit(2 * 1048576, undefined)).toBe(true);
  });

  it("gives large bodies their turn one at a time, in order, a turn of the event loop apart", async () => {
    const limits = new AdmissionLimits({ largeBodyBytes: 100 });
    const admit = (bytes: number) => {
      const admitted = limits.admit(bytes, undefined);
      if (!("admission" in admitted)) throw new Error("refused");
      return admitted.admission;
    };
    const [a, b, c, small] = [admit(100), admit(200), admit(300), admit(99)];
    const order: string[] = [];
    const turns = [a.turn().then(() => order.push("a")), b.turn().then(() => order.push("b")), c.turn().then(() => order.push("c"))];
    await small.turn();
    order.push("small");
    await turns[0];
    await new Promise((resume) => setImmediate(resume));
    // A small body never waits; b and c wait for a.
    expect(order).toEqual(["a", "small"]);
    // Released while waiting: it leaves the queue, and c is next.
    b.release();
    a.release();
    await turns[2];
    expect(order).toEqual(["a", "small", "c"]);
    c.release();
    const d = admit(500);
    await d.turn();
    d.release();
  });

  it("answers before the API server's deadline, and never later than the default", () => {
    expect(goDurationMs("10s")).toBe(10_000);
    expect(goDurationMs("1m30s")).toBe(90_000);
    expect(goDurationMs("500ms")).toBe(500);
    expect(goDurationMs("1.5s")).toBe(1500);
    expect(goDurationMs("ten seconds")).toBeUndefined();
    expect(goDurationMs("")).toBeUndefined();
    expect(deadlineFor("5s", 10_000)).toBe(4000);
    expect(deadlineFor("1s", 10_000)).toBe(800);
    expect(deadlineFor("30s", 10_000)).toBe(10_000);
    expect(deadlineFor(undefined, 10_000)).toBe(10_000);
    expect(deadlineFor("soon", 10_000)).toBe(10_000);
  });
});
