// The HTTPS admission server: one route per admission webhook, health and readiness,
// and nothing else. The pod handler is a synchronous function of the AdmissionRequest (no API
// calls on the hot path); the server owns parsing, errors, metrics, limits and deadlines.
import { STATUS_CODES } from "node:http";
import type { Readable } from "node:stream";
import Fastify, { type FastifyReply, type FastifyRequest, LogController } from "fastify";
import helmet from "helmet";
import type { Logger } from "pino";
import { parseAdmissionReview, reviewJson, deny, type AdmissionRequest, type AdmissionResponse } from "./admission-review.ts";
import { type Admission, AdmissionLimits, type AdmissionLimitsOptions } from "./admission-limits.ts";
import { limitConnectionsPerSource } from "./connections-per-source.ts";
import { countedBody } from "./counted-body.ts";
import { parseJsonBody } from "./json-body.ts";
import type { WebhookMetrics, WebhookResult } from "./metrics.ts";
import type { ServingCertificates } from "./serving-certificates.ts";
import { budgetUntil, type RenderBudget } from "../decoration/engine-bounds.ts";

export interface AdmissionDecision {
  response: AdmissionResponse;
  result: WebhookResult;
}

/**
 * Asynchronous where it asks the API server (PodDecoration admission's SubjectAccessReview).
 * `budget` is the request's time left before its deadline: work that users' objects drive
 * checks it (DESIGN §10).
 */
export type AdmissionHandler = (request: AdmissionRequest, budget?: RenderBudget) => AdmissionDecision | Promise<AdmissionDecision>;

/** A handler that answers from memory alone, as the pod webhook does. */
export type SynchronousAdmissionHandler = (request: AdmissionRequest, budget?: RenderBudget) => AdmissionDecision;

/** Paths the webhook configurations point at, by webhook name. */
export const webhookPaths = {
  "mutate-pods": "/mutate-pods",
  "mutate-poddecorations": "/mutate-poddecorations",
  "validate-poddecorations": "/validate-poddecorations",
  "mutate-collasets": "/mutate-collasets",
  "validate-collasets": "/validate-collasets",
  "mutate-clusterpoddecorations": "/mutate-clusterpoddecorations",
  "validate-clusterpoddecorations": "/validate-clusterpoddecorations",
  "mutate-podtransitionrules": "/mutate-podtransitionrules",
  "validate-podtransitionrules": "/validate-podtransitionrules",
  "mutate-operationjobs": "/mutate-operationjobs",
  "validate-operationjobs": "/validate-operationjobs",
} as const;

export type WebhookName = keyof typeof webhookPaths;

export interface Readiness {
  ready: boolean;
  reason?: string;
}

export interface WebhookServerOptions {
  logger: Logger;
  handlers: Partial<Record<WebhookName, AdmissionHandler>>;
  metrics: WebhookMetrics;
  readiness: () => Readiness;
  /** Without certificates the server speaks plain HTTP (handler tests through inject()). */
  certificates?: ServingCertificates;
  /**
   * With it, every caller must present a client certificate signed by this CA (PEM): the API
   * server does, per its AdmissionConfiguration; anyone else is refused at the TLS handshake.
   */
  clientCaPem?: string;
  bodyLimitBytes?: number;
  limits?: AdmissionLimitsOptions;
}

/** The API server's own limit on a request body (3 MiB): nothing larger can be admitted anyway. */
export const DEFAULT_BODY_LIMIT_BYTES = 3 * 1024 * 1024;

export type WebhookServer = Awaited<ReturnType<typeof createWebhookServer>>;

/**
 * What a request let in at its headers carries to its body's parser and its errors. Kept on the
 * request itself (a property fastify declares on every request), not in a WeakMap keyed by it: a
 * scavenge holds a WeakMap's values strongly, so every request reached from one was promoted to the
 * old generation and lived until a full collection.
 */
interface Admitted {
  admission: Admission;
  webhook: WebhookName;
  /** process.hrtime.bigint() at its headers, for the latency metric. */
  started: bigint;
  /** performance.now() at its headers: the deadline counts from there. */
  startedMs: number;
}

const ADMITTED = Symbol("pod-decorator admission");

declare module "fastify" {
  interface FastifyRequest {
    [ADMITTED]: Admitted | null;
  }
}

function secondsSince(started: bigint): number {
  return Number(process.hrtime.bigint() - started) / 1e9;
}

export async function createWebhookServer(options: WebhookServerOptions) {
  const certificates = options.certificates;
  const bodyLimit = options.bodyLimitBytes ?? DEFAULT_BODY_LIMIT_BYTES;
  const limits = new AdmissionLimits(options.limits);
  const { arrivalDeadlineMs, keepAliveTimeoutMs, maxConnectionsPerSource } = limits.options;
  const throttle = (reply: FastifyReply, refusal: OverBudgetError) => {
    options.metrics.observe(refusal.webhook, 429, "throttled", refusal.seconds);
    return reply.code(429).header("retry-after", "1").header("connection", "close")
      .send({ statusCode: 429, error: "Too Many Requests", message: `pod-decorator: ${refusal.message}; retry after 1 s` });
  };
  // Node's own timeouts: the headers and body of a request (and a TLS handshake) arrive within
  // the arrival deadline, else 408 and the connection closed; checked a few times within it.
  const arrivalTimeouts = {
    headersTimeout: arrivalDeadlineMs,
    requestTimeout: arrivalDeadlineMs,
    connectionsCheckingInterval: Math.max(10, Math.min(1000, Math.floor(arrivalDeadlineMs / 4))),
  };
  const app = Fastify({
    loggerInstance: options.logger,
    // One log line per admission request would cost more than the admission itself.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit,
    // fastify sets these two on the server after creating it.
    requestTimeout: arrivalDeadlineMs,
    keepAliveTimeout: keepAliveTimeoutMs,
    return503OnClosing: true,
    ...(certificates === undefined ? { http: arrivalTimeouts } : { https: { ...arrivalTimeouts, handshakeTimeout: arrivalDeadlineMs, ...toTls(certificates.current(), options.clientCaPem), ...clientAuthentication(options.clientCaPem), minVersion: "TLSv1.2" as const } }),
  });
  limitConnectionsPerSource(app.server, maxConnectionsPerSource);
  // helmet's headers (CSP off: a JSON API), from one middleware built here. @fastify/helmet built
  // it anew for every request and assigned every reply a closure, which V8 allocates in the old
  // generation: each reply and request it reached was then promoted (see counted-body.ts).
  const securityHeaders = helmet({ contentSecurityPolicy: false });
  app.addHook("onRequest", (request, reply, done) => {
    // Its middlewares only set headers: none fails.
    securityHeaders(request.raw, reply.raw, () => {
      done();
    });
  });
  app.decorateRequest(ADMITTED, null);
  app.removeContentTypeParser("application/json");
  app.addContentTypeParser("application/json", { parseAs: "string" }, async (request: FastifyRequest, body: string | Buffer) => {
    // A large body waits for its turn: parsing and answering it blocks the event loop.
    await request[ADMITTED]?.admission.turn();
    return parseJsonBody(typeof body === "string" ? body : body.toString("utf8"));
  });

  if (certificates !== undefined) {
    certificates.onChange((pair) => {
      const server = app.server as unknown as { setSecureContext?: (context: { cert: string; key: string }) => void };
      server.setSecureContext?.(toTls(pair, options.clientCaPem));
      options.logger.info({ event: "certificate-rotated" }, "serving certificate reloaded");
    });
  }

  app.get("/healthz", async (_request, reply) => reply.type("text/plain").send("ok"));
  app.get("/readyz", async (_request, reply) => {
    const readiness = options.readiness();
    if (readiness.ready) return reply.type("text/plain").send("ok");
    return reply.code(503).type("text/plain").send(`not ready: ${readiness.reason ?? "starting"}`);
  });

  for (const [name, path] of Object.entries(webhookPaths) as [WebhookName, string][]) {
    const handler = options.handlers[name];
    if (handler === undefined) continue;
    // Before the body is read: a request beyond the limits costs only its headers.
    const admit = (request: FastifyRequest, reply: FastifyReply, done: () => void) => {
      const started = process.hrtime.bigint();
      const declared = Number(request.headers["content-length"]);
      const bytes = Number.isSafeInteger(declared) && declared >= 0 ? Math.min(declared, bodyLimit) : 0;
      const timeout = (request.query as Record<string, unknown>).timeout;
      const admitted = limits.admit(bytes, typeof timeout === "string" ? timeout : undefined);
      if ("refused" in admitted) {
        void throttle(reply, new OverBudgetError(name, admitted.refused, secondsSince(started)));
        return;
      }
      const { admission } = admitted;
      request[ADMITTED] = { admission, webhook: name, started, startedMs: performance.now() };
      const deadline = setTimeout(() => {
        if (reply.sent) return;
        options.metrics.observe(name, 503, "timeout", secondsSince(started));
        void reply.code(503).header("connection", "close")
          .send({ statusCode: 503, error: "Service Unavailable", message: `pod-decorator: no answer within ${admission.deadlineMs} ms, the deadline below the API server's timeout` });
      }, admission.deadlineMs);
      const release = () => {
        clearTimeout(deadline);
        admission.release();
      };
      reply.raw.once("finish", release);
      reply.raw.once("close", release);
      done();
    };
    const countBody = (request: FastifyRequest, reply: FastifyReply, payload: Readable, done: (error: null, body: Readable) => void) => {
      const entry = request[ADMITTED];
      done(null, entry === null ? payload : countedBody(payload, entry.admission, (reason) => new OverBudgetError(entry.webhook, reason, secondsSince(entry.started)), () => reply.sent));
    };
    app.post(path, { onRequest: admit, preParsing: countBody }, async (request, reply) => {
      const started = process.hrtime.bigint();
      // The deadline answered already.
      if (reply.sent) return reply;
      // Before the caches have synced an answer could miss decorations: fail the call, so the
      // API server applies the configuration's failurePolicy instead of a wrong answer.
      const readiness = options.readiness();
      if (!readiness.ready) {
        options.metrics.observe(name, 503, "error", secondsSince(started));
        return reply.code(503).send({ statusCode: 503, error: "Service Unavailable", message: `not ready: ${readiness.reason ?? "starting"}` });
      }
      const parsed = parseAdmissionReview(request.body);
      if ("error" in parsed) {
        options.metrics.observe(name, 400, "error", secondsSince(started));
        return reply.code(400).send({ statusCode: 400, error: "Bad Request", message: parsed.error });
      }
      let decision: AdmissionDecision;
      try {
        const entry = request[ADMITTED];
        decision = await handler(parsed.request, entry === null ? undefined : budgetUntil(entry.startedMs, entry.admission.deadlineMs));
      } catch (error) {
        // A bug in a handler is answered, logged and counted; it never takes the server down.
        const message = error instanceof Error ? error.message : String(error);
        options.logger.error({ webhook: name, uid: parsed.request.uid, err: error }, "admission handler failed");
        decision = { response: deny(parsed.request.uid, 500, `pod-decorator ${name}: internal error: ${message}`), result: "error" };
      }
      if (reply.sent) return reply;
      options.metrics.observe(name, 200, decision.result, secondsSince(started));
      return reply.type("application/json; charset=utf-8").send(reviewJson(decision.response));
    });
  }

  app.setErrorHandler((error: { statusCode?: number; message?: string }, request, reply) => {
    if (error instanceof OverBudgetError) return throttle(reply, error);
    const code = typeof error.statusCode === "number" && error.statusCode >= 400 && error.statusCode < 600 ? error.statusCode : 500;
    if (code >= 500) options.logger.error({ err: error, url: request.url }, "request failed");
    return reply.code(code).send({ statusCode: code, error: STATUS_CODES[code] ?? "Error", message: error.message ?? "error" });
  });

  return app;
}

/** A request beyond the in-flight limits: answered 429 with Retry-After, so the API server retries it. */
class OverBudgetError extends Error {
  readonly statusCode = 429;
  readonly webhook: WebhookName;
  /** From the request's headers to its refusal, for the latency metric. */
  readonly seconds: number;

  constructor(webhook: WebhookName, reason: string, seconds: number) {
    super(reason);
    this.webhook = webhook;
    this.seconds = seconds;
  }
}

function toTls(pair: { certPem: string; keyPem: string }, clientCaPem: string | undefined): { cert: string; key: string; ca?: string } {
  return { cert: pair.certPem, key: pair.keyPem, ...(clientCaPem === undefined ? {} : { ca: clientCaPem }) };
}

/** A client without a certificate the CA signed never gets past the handshake, so never to a handler. */
function clientAuthentication(clientCaPem: string | undefined): { requestCert?: boolean; rejectUnauthorized?: boolean } {
  return clientCaPem === undefined ? {} : { requestCert: true, rejectUnauthorized: true };
}
