// The HTTP side of a PodTransitionRule webhook: a JSON POST of kuperator's WebhookRequest, or a
// GET of its poll URL, answered with JSON — as kuperator's utils/http does it (2xx and JSON, else
// `failed by response status code: N, body: ...`), with its 30 s timeout, and bounded here: an
// endpoint that hangs, trickles or answers megabytes is cut off, so it can hold its own pods and
// nothing else. A caBundle is base64 of PEM, trusted for that URL alone.
import { request as httpRequest } from "node:http";
import { request as httpsRequest } from "node:https";

export interface WebhookHttpOptions {
  /** Base64 of a PEM bundle; empty or absent: the system's roots. */
  caBundle?: string | undefined;
  timeoutMs: number;
  /** The most response bytes read (default 1 MiB). */
  maxBytes?: number;
}

/** Sends `body` (JSON) with `method` and parses the JSON answer; rejects with a message fit for a pod's reject reason. */
export function exchangeJson(method: "POST" | "GET", url: string, body: unknown, options: WebhookHttpOptions): Promise<unknown> {
  const maxBytes = options.maxBytes ?? 1024 * 1024;
  return new Promise((resolve, reject) => {
    let target: URL;
    try {
      target = new URL(url);
    } catch {
      reject(new Error(`invalid URL ${JSON.stringify(url)}`));
      return;
    }
    const payload = body === undefined ? undefined : Buffer.from(`${JSON.stringify(body)}\n`);
    const ca = options.caBundle === undefined || options.caBundle === "" || options.caBundle === "Cg==" ? undefined : Buffer.from(options.caBundle, "base64").toString("utf8");
    const send = target.protocol === "https:" ? httpsRequest : httpRequest;
    let settled = false;
    const finish = (error: Error | undefined, value?: unknown) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (error === undefined) resolve(value);
      else reject(error);
    };
    const request = send(target, {
      method,
      headers: { "content-type": "application/json", accept: "application/json", ...(payload === undefined ? {} : { "content-length": payload.length }) },
      ...(ca === undefined ? {} : { ca }),
      // One connection per call: a hung peer holds nothing shared.
      agent: false,
    }, (response) => {
      const chunks: Buffer[] = [];
      let size = 0;
      response.on("data", (chunk: Buffer) => {
        size += chunk.length;
        if (size > maxBytes) {
          request.destroy();
          finish(new Error(`the response is larger than ${maxBytes} bytes`));
          return;
        }
        chunks.push(chunk);
      });
      response.on("error", (error) => finish(error));
      response.on("end", () => {
        const text = Buffer.concat(chunks).toString("utf8");
        const status = response.statusCode ?? 0;
        if (status < 200 || status > 299) {
          finish(new Error(`failed by response status code: ${status}, body: ${truncate(text)}`));
          return;
        }
        try {
          finish(undefined, JSON.parse(text));
        } catch (error) {
          finish(new Error(`err: ${error instanceof Error ? error.message : String(error)}, response: ${truncate(text)}`));
        }
      });
    });
    // The whole exchange, not an idle gap: a trickling peer is cut off all the same.
    const timer = setTimeout(() => {
      request.destroy();
      finish(new Error(`no answer within ${Math.round(options.timeoutMs / 1000)}s`));
    }, options.timeoutMs);
    request.on("error", (error) => finish(error));
    request.end(payload);
  });
}

function truncate(text: string): string {
  return text.length > 256 ? `${text.slice(0, 253)}...` : text;
}
