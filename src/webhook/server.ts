// The HTTPS admission server: one route per admission webhook, health and readiness,
// and nothing else. Handlers are synchronous functions of the AdmissionRequest (no API
// calls on the hot path); the server owns parsing, errors, metrics and timeouts.
import { STATUS_CODES } from "node:http";
import helmet from "@fastify/helmet";
import Fastify, { LogController } from "fastify";
import type { Logger } from "pino";
import { parseAdmissionReview, review, deny, type AdmissionRequest, type AdmissionResponse } from "./admission-review.ts";
import { type BadBodyError, parseJsonBody } from "./json-body.ts";
import type { WebhookMetrics, WebhookResult } from "./metrics.ts";
import type { ServingCertificates } from "./serving-certificates.ts";

export interface AdmissionDecision {
  response: AdmissionResponse;
  result: WebhookResult;
}

export type AdmissionHandler = (request: AdmissionRequest) => AdmissionDecision;

/** Paths the webhook configurations point at, by webhook name. */
export const webhookPaths = {
  "mutate-pods": "/mutate-pods",
  "mutate-poddecorations": "/mutate-poddecorations",
  "validate-poddecorations": "/validate-poddecorations",
  "mutate-collasets": "/mutate-collasets",
  "validate-collasets": "/validate-collasets",
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
  /** An AdmissionReview carries the object and the old object: allow two large pods. */
  bodyLimitBytes?: number;
  handlerTimeoutMs?: number;
}

/** An AdmissionReview carries the object and the old object: two large pods fit. */
export const DEFAULT_BODY_LIMIT_BYTES = 8 * 1024 * 1024;

export type WebhookServer = Awaited<ReturnType<typeof createWebhookServer>>;

export async function createWebhookServer(options: WebhookServerOptions) {
  const certificates = options.certificates;
  const app = Fastify({
    loggerInstance: options.logger,
    // One log line per admission request would cost more than the admission itself.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: options.bodyLimitBytes ?? DEFAULT_BODY_LIMIT_BYTES,
    handlerTimeout: options.handlerTimeoutMs ?? 10_000,
    requestTimeout: 30_000,
    return503OnClosing: true,
    ...(certificates === undefined ? {} : { https: { ...toTls(certificates.current()), minVersion: "TLSv1.2" as const } }),
  });
  await app.register(helmet, { contentSecurityPolicy: false, global: true });
  app.removeContentTypeParser("application/json");
  app.addContentTypeParser("application/json", { parseAs: "string" }, (_request, body, done) => {
    try {
      done(null, parseJsonBody(body as string));
    } catch (error) {
      done(error as BadBodyError, undefined);
    }
  });

  if (certificates !== undefined) {
    certificates.onChange((pair) => {
      const server = app.server as unknown as { setSecureContext?: (context: { cert: string; key: string }) => void };
      server.setSecureContext?.(toTls(pair));
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
    app.post(path, async (request, reply) => {
      const started = process.hrtime.bigint();
      const seconds = () => Number(process.hrtime.bigint() - started) / 1e9;
      // Before the caches have synced an answer could miss decorations: fail the call, so the
      // API server applies the configuration's failurePolicy instead of a wrong answer.
      const readiness = options.readiness();
      if (!readiness.ready) {
        options.metrics.observe(name, 503, "error", seconds());
        return reply.code(503).send({ statusCode: 503, error: "Service Unavailable", message: `not ready: ${readiness.reason ?? "starting"}` });
      }
      const parsed = parseAdmissionReview(request.body);
      if ("error" in parsed) {
        options.metrics.observe(name, 400, "error", seconds());
        return reply.code(400).send({ statusCode: 400, error: "Bad Request", message: parsed.error });
      }
      let decision: AdmissionDecision;
      try {
        decision = handler(parsed.request);
      } catch (error) {
        // A bug in a handler is answered, logged and counted; it never takes the server down.
        const message = error instanceof Error ? error.message : String(error);
        options.logger.error({ webhook: name, uid: parsed.request.uid, err: error }, "admission handler failed");
        decision = { response: deny(parsed.request.uid, 500, `pod-decorator ${name}: internal error: ${message}`), result: "error" };
      }
      options.metrics.observe(name, 200, decision.result, seconds());
      return reply.send(review(decision.response));
    });
  }

  app.setErrorHandler((error: { statusCode?: number; message?: string }, request, reply) => {
    const code = typeof error.statusCode === "number" && error.statusCode >= 400 && error.statusCode < 600 ? error.statusCode : 500;
    if (code >= 500) options.logger.error({ err: error, url: request.url }, "request failed");
    return reply.code(code).send({ statusCode: code, error: STATUS_CODES[code] ?? "Error", message: error.message ?? "error" });
  });

  return app;
}

function toTls(pair: { certPem: string; keyPem: string }): { cert: string; key: string } {
  return { cert: pair.certPem, key: pair.keyPem };
}
