// A request body as it arrives, charged to its admission's budget chunk by chunk
// (admission-limits.ts): the stream the content-type parser reads instead of the raw body.
//
// It is a Readable fed by the raw body's events, not a Transform the body is piped through: every
// Writable (a Transform is one) gets a closure assigned to a property in its constructor
// (WritableState.onwrite), and V8 allocates a function literal assigned to a property straight in
// the old generation. That closure reaches the stream, and through it the request, its body and
// its reply: every scavenge kept them alive from the old generation, so each request's objects were
// copied twice and then promoted, and lived on until a full collection (tens of MB per second of
// promoted garbage under load, DESIGN §9). A Readable has no such closure.
import { Readable } from "node:stream";
import type { Admission } from "./admission-limits.ts";

/**
 * `payload` as it arrives, each chunk charged to `admission`. A chunk that overruns the budget, or
 * the end of the body when too many are being answered, fails the stream with `overBudget`'s error.
 * Refused, or once `answered()` (its deadline answered it), the rest is read and dropped, never kept
 * for a parser, and the stream never ends.
 */
export function countedBody(payload: Readable, admission: Admission, overBudget: (reason: string) => Error, answered: () => boolean): Readable {
  const counted = new Readable({
    read: () => {
      payload.resume();
    },
  });
  const drop = () => {
    payload.off("data", onData);
    payload.off("end", onEnd);
    payload.off("error", onError);
    payload.resume();
  };
  const onData = (chunk: Buffer) => {
    if (answered()) {
      drop();
      return;
    }
    const refused = admission.received(chunk.length);
    if (refused !== undefined) {
      drop();
      counted.destroy(overBudget(refused));
      return;
    }
    if (!counted.push(chunk)) payload.pause();
  };
  const onEnd = () => {
    drop();
    const refused = admission.arrived();
    if (refused === undefined) counted.push(null);
    else counted.destroy(overBudget(refused));
  };
  const onError = (error: Error) => {
    drop();
    counted.destroy(error);
  };
  payload.on("data", onData);
  payload.on("end", onEnd);
  payload.on("error", onError);
  return counted;
}
