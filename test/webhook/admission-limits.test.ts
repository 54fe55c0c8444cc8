import { describe, expect, it } from "vitest";
import { AdmissionLimits, deadlineFor, goDurationMs } from "../../src/webhook/admission-limits.ts";

describe("admission limits", () => {
  const MiB = 1048576;
  function admitted(limits: AdmissionLimits, declared: number) {
    const result = limits.admit(declared, undefined);
    if (!("admission" in result)) throw new Error(`refused: ${result.refused}`);
    return result.admission;
  }

  it("answers at most maxInFlight requests at once, and another once one is released", () => {
    const limits = new AdmissionLimits({ maxInFlight: 2 });
    const [first, second, third] = [admitted(limits, 10), admitted(limits, 10), admitted(limits, 10)];
    // Let in at their headers; counted once their bodies have arrived.
    expect(first.arrived()).toBeUndefined();
    expect(second.arrived()).toBeUndefined();
    expect(third.arrived()).toBe("2 admission requests are in flight (at most 2)");
    expect(limits.admit(10, undefined)).toEqual({ refused: "2 admission requests are in flight (at most 2)" });
    first.release();
    first.release();
    expect(limits.inFlight).toBe(1);
    expect(third.arrived()).toBeUndefined();
  });

  it("charges a body as it arrives, never from its declared length: bodies declared and not sent hold nothing", () => {
    const limits = new AdmissionLimits();
    const idle = [3, 3, 3, 1].map((mebibytes) => admitted(limits, mebibytes * MiB));
    expect(limits.inFlightBytes).toBe(0);
    const real = admitted(limits, 4096);
    expect(real.received(4096)).toBeUndefined();
    expect(real.arrived()).toBeUndefined();
    expect(limits.inFlightBytes).toBe(4096);
    idle[0]!.received(100);
    expect(limits.inFlightBytes).toBe(4196);
    for (const admission of [...idle, real]) admission.release();
    expect(limits.inFlightBytes).toBe(0);
  });

  it("refuses the bytes that overrun maxInFlightBytes, but always lets one body in however large", () => {
    const limits = new AdmissionLimits({ maxInFlightBytes: 4 * MiB });
    const [small, huge] = [admitted(limits, 0), admitted(limits, 9 * MiB)];
    // Nothing else has arrived yet: the whole of it is let in.
    expect(huge.received(9 * MiB)).toBeUndefined();
    expect(small.received(1)).toBe("9.0 MiB of other admission requests are in flight and this one has 0.0 MiB so far (at most 4.0 MiB at once)");
    expect(limits.admit(0, undefined)).toEqual({ refused: "9.0 MiB of admission requests are in flight and this one has 0.0 MiB (at most 4.0 MiB at once)" });
    huge.release();
    expect(limits.inFlightBytes).toBe(0);
  });

  it("refuses at its headers a body declared larger than what bodies already received leave", () => {
    const limits = new AdmissionLimits({ maxInFlightBytes: 4 * MiB, largeBodyBytes: 10 * MiB });
    const arriving = admitted(limits, 3 * MiB);
    expect(arriving.received(3 * MiB)).toBeUndefined();
    expect(limits.admit(2 * MiB, undefined)).toEqual({ refused: "3.0 MiB of admission requests are in flight and this one has 2.0 MiB (at most 4.0 MiB at once)" });
    expect("admission" in limits.admit(MiB, undefined)).toBe(true);
  });

  it("leaves a tenth of the budget to small bodies: large ones, however many, never keep out an ordinary pod's review", () => {
    const limits = new AdmissionLimits();
    for (const large of [admitted(limits, 3 * MiB), admitted(limits, 3 * MiB), admitted(limits, 3 * MiB)]) expect(large.received(3 * MiB)).toBeUndefined();
    const refusal = "9.0 MiB of admission requests are in flight and this one has 3.0 MiB (at most 9.0 MiB at once of bodies of 256 KiB or more)";
    expect(limits.admit(3 * MiB, undefined)).toEqual({ refused: refusal });
    // Without a declared length a body is large once what arrived is.
    const undeclared = admitted(limits, 0);
    expect(undeclared.received(255 * 1024)).toBeUndefined();
    expect(undeclared.received(1024)).toBe("9.0 MiB of other admission requests are in flight and this one has 0.3 MiB so far (at most 9.0 MiB at once of bodies of 256 KiB or more)");
    const review = admitted(limits, 8 * 1024);
    expect(review.received(8 * 1024)).toBeUndefined();
  });

  it("gives large bodies their turn one at a time, in order, a turn of the event loop apart", async () => {
    const limits = new AdmissionLimits({ largeBodyBytes: 100 });
    // Large or not by what arrived: a declared length decides nothing.
    const arrive = (bytes: number) => {
      const admission = admitted(limits, 0);
      admission.received(bytes);
      admission.arrived();
      return admission;
    };
    const [a, b, c, small] = [arrive(100), arrive(200), arrive(300), arrive(99)];
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
    const d = arrive(500);
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
