import { PassThrough, Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { AdmissionLimits } from "../../src/webhook/admission-limits.ts";
import { countedBody } from "../../src/webhook/counted-body.ts";

const refusal = (reason: string) => Object.assign(new Error(reason), { statusCode: 429 });

async function read(stream: NodeJS.ReadableStream): Promise<{ body: string } | { error: Error }> {
  const chunks: Buffer[] = [];
  try {
    for await (const chunk of stream) chunks.push(chunk as Buffer);
    return { body: Buffer.concat(chunks).toString() };
  } catch (error) {
    return { error: error as Error };
  }
}

function admitted(limits: AdmissionLimits) {
  const admitted = limits.admit(0, undefined);
  if ("refused" in admitted) throw new Error(admitted.refused);
  return admitted.admission;
}

describe("a request body counted as it arrives", () => {
  it("passes the body on, charging each chunk to the budget, and counts the request as answering at its end", async () => {
    const limits = new AdmissionLimits();
    const payload = new PassThrough();
    const counted = countedBody(payload, admitted(limits), refusal, () => false);
    payload.write("{\"a\":");
    expect(limits.inFlightBytes).toBe(5);
    payload.end("1}");
    expect(await read(counted)).toEqual({ body: "{\"a\":1}" });
    expect(limits.inFlightBytes).toBe(7);
    expect(limits.inFlight).toBe(1);
  });

  it("fails with the refusal at the chunk that overruns the budget, and drops the rest without keeping it", async () => {
    const limits = new AdmissionLimits({ maxInFlightBytes: 10 });
    const other = admitted(limits);
    other.received(8);
    const payload = new PassThrough();
    const counted = countedBody(payload, admitted(limits), refusal, () => false);
    payload.write("12345");
    const result = await read(counted);
    expect(result).toEqual({ error: expect.objectContaining({ statusCode: 429 }) as unknown });
    expect((result as { error: Error }).error.message).toMatch(/^0\.0 MiB of other admission requests are in flight/);
    payload.end("more that is read and dropped");
    expect(payload.readableFlowing).toBe(true);
    expect(limits.inFlightBytes).toBe(8);
  });

  it("fails at its end when as many requests as allowed are being answered", async () => {
    const limits = new AdmissionLimits({ maxInFlight: 1 });
    const first = admitted(limits);
    const payload = new PassThrough();
    const counted = countedBody(payload, admitted(limits), refusal, () => false);
    first.arrived();
    payload.end("{}");
    const result = await read(counted);
    expect((result as { error: Error }).error.message).toBe("1 admission requests are in flight (at most 1)");
  });

  it("once the request is answered (its deadline), neither passes on nor charges what still arrives", async () => {
    const limits = new AdmissionLimits();
    const payload = new PassThrough();
    let answered = false;
    const counted = countedBody(payload, admitted(limits), refusal, () => answered);
    const seen: string[] = [];
    counted.on("data", (chunk: Buffer) => seen.push(chunk.toString()));
    payload.write("ab");
    await new Promise(setImmediate);
    answered = true;
    payload.end("cd");
    await new Promise(setImmediate);
    expect(seen).toEqual(["ab"]);
    expect(limits.inFlightBytes).toBe(2);
    expect(counted.readableEnded).toBe(false);
  });

  it("is no Writable: V8 allocates a Writable's onwrite closure in the old generation, which would keep each request's objects alive through every scavenge", () => {
    const counted = countedBody(new PassThrough(), admitted(new AdmissionLimits()), refusal, () => false);
    expect(counted).not.toBeInstanceOf(Writable);
  });
});
