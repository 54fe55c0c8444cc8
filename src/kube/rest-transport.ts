// Raw JSON GETs and watch streams, authenticated from the KubeConfig. Informers use this
// instead of the generated clients so that list items and watch events arrive in exactly the
// same wire shape (the generated deserializer turns lists into class instances, drops fields
// it does not know and rounds timestamps) and so that a watch can be aborted at will.
import { request as httpRequest, type IncomingMessage, type RequestOptions } from "node:http";
import { request as httpsRequest } from "node:https";
import { ApiException, type KubeConfig } from "@kubernetes/client-node";
import { withoutTrailingSlashes } from "./base-url.ts";

export type Query = Record<string, string | number | boolean | undefined>;

export interface RestTransportOptions {
  /** A list request whose socket is idle this long fails; watches have no such limit. */
  requestTimeoutMs?: number;
}

export class RestTransport {
  readonly #config: KubeConfig;
  readonly #requestTimeoutMs: number;

  constructor(config: KubeConfig, options: RestTransportOptions = {}) {
    this.#config = config;
    this.#requestTimeoutMs = options.requestTimeoutMs ?? 60_000;
  }

  /** GETs path and parses the JSON body; a non-2xx answer throws an ApiException with the raw body. */
  async getJson(path: string, query: Query = {}, signal?: AbortSignal): Promise<unknown> {
    const response = await this.#get(path, query, signal, this.#requestTimeoutMs);
    const body = await readBody(response);
    if (!isSuccess(response)) throw apiError(response, body);
    return JSON.parse(body) as unknown;
  }

  /**
   * GETs a streaming path and calls onLine for every complete line. Resolves when the server
   * ends the response; rejects on a non-2xx answer, a transport error, an abort, or when
   * onLine throws (the connection is then closed).
   */
  async streamLines(path: string, query: Query, signal: AbortSignal, onLine: (line: string) => void): Promise<void> {
    const response = await this.#get(path, query, signal, 0);
    if (!isSuccess(response)) throw apiError(response, await readBody(response));
    response.setEncoding("utf8");
    let pending = "";
    await new Promise<void>((resolve, reject) => {
      const deliver = (line: string): boolean => {
        try {
          onLine(line);
          return true;
        } catch (error) {
          response.destroy();
          reject(error instanceof Error ? error : new Error(String(error)));
          return false;
        }
      };
      response.on("data", (chunk: string) => {
        pending += chunk;
        let newline = pending.indexOf("\n");
        while (newline >= 0) {
          const line = pending.slice(0, newline).trim();
          pending = pending.slice(newline + 1);
          if (line !== "" && !deliver(line)) return;
          newline = pending.indexOf("\n");
        }
      });
      response.on("end", () => {
        const rest = pending.trim();
        if (rest === "" || deliver(rest)) resolve();
      });
      response.on("error", reject);
      response.on("aborted", () => reject(new Error("watch connection aborted")));
    });
  }

  async #get(path: string, query: Query, signal: AbortSignal | undefined, idleTimeoutMs: number): Promise<IncomingMessage> {
    const cluster = this.#config.getCurrentCluster();
    if (cluster === null) throw new Error("the kubeconfig has no current cluster");
    const url = new URL(withoutTrailingSlashes(cluster.server) + path);
    for (const [key, value] of Object.entries(query)) if (value !== undefined) url.searchParams.set(key, String(value));
    const options: RequestOptions & { headers: Record<string, string> } = { method: "GET", headers: { Accept: "application/json" } };
    // Fills in TLS material, bearer/exec tokens and the cached agent, refreshing tokens as needed.
    await this.#config.applyToHTTPSOptions(options);
    const send = url.protocol === "http:" ? httpRequest : httpsRequest;
    return new Promise<IncomingMessage>((resolve, reject) => {
      const request = send(url, { ...options, ...(signal === undefined ? {} : { signal }) }, resolve);
      request.on("error", reject);
      if (idleTimeoutMs > 0) request.setTimeout(idleTimeoutMs, () => request.destroy(new Error(`GET ${path}: no answer within ${idleTimeoutMs}ms`)));
      request.end();
    });
  }
}

function isSuccess(response: IncomingMessage): boolean {
  const code = response.statusCode ?? 0;
  return code >= 200 && code < 300;
}

function readBody(response: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    response.on("data", (chunk: Buffer) => chunks.push(chunk));
    response.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    response.on("error", reject);
  });
}

function apiError(response: IncomingMessage, body: string): ApiException<string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(response.headers)) if (typeof value === "string") headers[name] = value;
  return new ApiException(response.statusCode ?? 0, response.statusMessage ?? "request failed", body, headers);
}
