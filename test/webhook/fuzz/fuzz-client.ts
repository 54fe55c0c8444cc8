// Sends one generated request over HTTPS and collects the answer, or says why there was none
// within the time allowed (a hang is a finding like any other).
import { type Agent, request as httpsRequest } from "node:https";
import type { Answer } from "./answer-checks.ts";
import type { FuzzRequest } from "./admission-inputs.ts";

export type Outcome = { answer: Answer } | { failure: string };

const CHUNK = Buffer.alloc(1024 * 1024, "x");
const PREFIX_BYTES = 64 * 1024;

export function send(target: { port: number; ca: string; agent: Agent }, fuzz: FuzzRequest, timeoutMs: number): Promise<Outcome> {
  return new Promise((done) => {
    const headers: Record<string, string | number> = {};
    if (fuzz.contentType !== undefined) headers["content-type"] = fuzz.contentType;
    const body = fuzz.body;
    if (Buffer.isBuffer(body)) headers["content-length"] = body.length;
    else if (body !== undefined) headers[body.chunked ? "transfer-encoding" : "content-length"] = body.chunked ? "chunked" : body.oversizedBytes;

    let settled = false;
    const settle = (outcome: Outcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      // A connection whose request body was cut short cannot carry another request.
      if (body !== undefined && !Buffer.isBuffer(body)) call.destroy();
      done(outcome);
    };
    const call = httpsRequest(
      { host: "127.0.0.1", port: target.port, method: fuzz.method, path: fuzz.path, headers, ca: target.ca, agent: fuzz.freshConnection ? false : target.agent },
      (response) => {
        const chunks: Buffer[] = [];
        response.on("data", (chunk: Buffer) => chunks.push(chunk));
        response.on("end", () => settle({ answer: { status: response.statusCode ?? 0, contentType: response.headers["content-type"], body: Buffer.concat(chunks) } }));
        response.on("error", (error) => settle({ failure: `the answer broke off: ${error.message}` }));
      },
    );
    const timer = setTimeout(() => {
      settle({ failure: `no answer within ${timeoutMs}ms` });
      call.destroy();
    }, timeoutMs);
    call.on("error", (error) => settle({ failure: `${error.message} before an answer` }));

    if (body === undefined || Buffer.isBuffer(body)) {
      call.end(body);
      return;
    }
    // An oversized body is never finished: the server must answer without waiting for the end.
    // Its announced length alone condemns it, so only a prefix is sent; an unannounced one is
    // condemned by the byte that crosses the limit, sent last so that nothing follows the
    // answer (writing on would make the closing server reset the connection, answer unread).
    let remaining = body.chunked ? body.oversizedBytes : PREFIX_BYTES;
    const pump = () => {
      while (remaining > 0 && !call.destroyed) {
        const piece = remaining >= CHUNK.length ? CHUNK : CHUNK.subarray(0, remaining);
        remaining -= piece.length;
        if (!call.write(piece)) {
          call.once("drain", pump);
          return;
        }
      }
    };
    pump();
  });
}
