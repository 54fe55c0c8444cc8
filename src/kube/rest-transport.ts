// Raw JSON GETs, POSTs and watch streams, authenticated from the KubeConfig. Informers use this
// instead of the generated clients so that list items and watch events arrive in exactly the
// same wire shape (the generated deserializer turns lists into class instances, drops fields
// it does not know and rounds timestamps) and so that a watch can be aborted at will; the
// server-side dry run posts pods with it so that every field reaches the API server (the
// generated serializer drops those its models lack, too).
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

  /** POSTs body as JSON and parses the answer; a non-2xx answer throws an ApiException with the raw body. */
  async postJson(path: string, query: Query, body: unknown, signal?: AbortSignal): Promise<unknown> {
    const response = await this.#request("POST", path, query, signal, this.#requestTimeoutMs, JSON.stringify(body));
    const answer = await readBody(response);
    if (!isSuccess(response)) throw apiError(response, answer);
    return JSON.parse(answer) as unknown;
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

  #get(path: string, query: Query, signal: AbortSignal | undefined, idleTimeoutMs: number): Promise<IncomingMessage> {
    return this.#request("GET", path, query, signal, idleTimeoutMs);
  }

  async #request(method: "GET" | "POST", path: string, query: Query, signal: AbortSignal | undefined, idleTimeoutMs: number, body?: string): Promise<IncomingMessage> {
    const cluster = this.#config.getCurrentCluster();
    if (cluster === null) throw new Error("the kubeconfig has no current cluster");
    const url = new URL(withoutTrailingSlashes(cluster.server) + path);
    for (const [key, value] of Object.entries(query)) if (value !== undefined) url.searchParams.set(key, String(value));
    const headers: Record<string, string> = { Accept: "application/json", ...(body === undefined ? {} : { "Content-Type": "application/json" }) };
    const options: RequestOptions & { headers: Record<string, string> } = { method, headers };
    // Fills in TLS material, bearer/exec tokens and the cached agent, refreshing tokens as needed.
    await this.#config.applyToHTTPSOptions(options);
    const send = url.protocol === "http:" ? httpRequest : httpsRequest;
    return new Promise<IncomingMessage>((resolve, reject) => {
      const request = send(url, { ...options, ...(signal === undefined ? {} : { signal }) }, resolve);
      request.on("error", reject);
      if (idleTimeoutMs > 0) request.setTimeout(idleTimeoutMs, () => request.destroy(new Error(`${method} ${path}: no answer within ${idleTimeoutMs}ms`)));
      request.end(body);
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
