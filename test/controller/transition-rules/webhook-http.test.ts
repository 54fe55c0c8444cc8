// The HTTP exchange with a PodTransitionRule webhook, against real local servers: what an app
// team's endpoint may do — hang, trickle, answer megabytes, answer garbage, fail — ends as an
// error with the reason, within the timeout.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { exchangeJson } from "../../../src/controller/transition-rules/webhook-http.ts";
import { createCertificateAuthority, issueCertificate } from "../../../src/webhook/certificates.ts";

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

async function serve(handler: (request: IncomingMessage, response: ServerResponse, body: string) => void): Promise<string> {
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => handler(request, response, Buffer.concat(chunks).toString("utf8")));
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/check`;
}

describe("exchangeJson", () => {
  it("POSTs the request as JSON and parses the JSON answer", async () => {
    let seen: { method?: string; type?: string; body?: unknown } = {};
    const url = await serve((request, response, body) => {
      seen = { method: request.method, type: request.headers["content-type"], body: JSON.parse(body) };
      response.end(JSON.stringify({ success: true, message: "ok" }));
    });
    expect(await exchangeJson("POST", url, { traceId: "t" }, { timeoutMs: 5000 })).toEqual({ success: true, message: "ok" });
    expect(seen).toEqual({ method: "POST", type: "application/json", body: { traceId: "t" } });
  });

  it("gives up on an endpoint that never answers, or trickles, at the timeout", async () => {
    const hangs = await serve(() => undefined);
    const started = Date.now();
    await expect(exchangeJson("POST", hangs, {}, { timeoutMs: 300 })).rejects.toThrow("no answer within 0s");
    expect(Date.now() - started).toBeLessThan(5000);
    const trickles = await serve((_request, response) => {
      response.write("{");
      const timer = setInterval(() => response.write(" "), 50);
      response.on("close", () => clearInterval(timer));
    });
    await expect(exchangeJson("POST", trickles, {}, { timeoutMs: 300 })).rejects.toThrow("no answer within");
  });

  it("refuses garbage, an error status and an answer over the size limit, saying what came", async () => {
    const garbage = await serve((_request, response) => response.end("<html>oops</html>"));
    await expect(exchangeJson("POST", garbage, {}, { timeoutMs: 5000 })).rejects.toThrow(/^err: .*, response: <html>oops<\/html>$/);
    const failing = await serve((_request, response) => {
      response.statusCode = 503;
      response.end("busy");
    });
    await expect(exchangeJson("POST", failing, {}, { timeoutMs: 5000 })).rejects.toThrow("failed by response status code: 503, body: busy");
    const huge = await serve((_request, response) => response.end(JSON.stringify({ message: "x".repeat(2 * 1024 * 1024) })));
    await expect(exchangeJson("POST", huge, {}, { timeoutMs: 5000, maxBytes: 1024 * 1024 })).rejects.toThrow("the response is larger than 1048576 bytes");
  });

  it("says why when nothing listens", async () => {
    const url = await serve(() => undefined);
    const server = servers.pop()!;
    await new Promise((resolve) => server.close(resolve));
    await expect(exchangeJson("GET", url, undefined, { timeoutMs: 5000 })).rejects.toThrow(/ECONNREFUSED/);
  });

  it("trusts the rule's caBundle for an https URL, and refuses a certificate it did not sign", async () => {
    const ca = await createCertificateAuthority("checker-ca", 1);
    const serving = await issueCertificate(ca, { commonName: "checker", hosts: ["127.0.0.1"], usage: "server", validityDays: 1 });
    const server = createHttpsServer({ cert: serving.certPem, key: serving.keyPem }, (_request, response) => response.end(JSON.stringify({ success: true })));
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const url = `https://127.0.0.1:${(server.address() as AddressInfo).port}/check`;
    expect(await exchangeJson("POST", url, {}, { timeoutMs: 5000, caBundle: Buffer.from(ca.certPem).toString("base64") })).toEqual({ success: true });
    const other = await createCertificateAuthority("another-ca", 1);
    await expect(exchangeJson("POST", url, {}, { timeoutMs: 5000, caBundle: Buffer.from(other.certPem).toString("base64") })).rejects.toThrow(/certificate/);
  });
});
