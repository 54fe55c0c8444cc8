// Certificate rotation under load: the serving certificate files are replaced while the API
// server keeps calling the pod webhook; no request may fail and the new certificate is served.
import { X509Certificate } from "node:crypto";
import { mkdtemp, rename, rm, writeFile } from "node:fs/promises";
import { request as httpsRequest } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect } from "vitest";
import { createCertificateAuthority, issueCertificate, type CertificateAuthority } from "../src/webhook/certificates.ts";
import { clients, eventually, test } from "./support/cluster.ts";
import { startOperator, type Operator } from "./support/operator.ts";

/** Answered requests before the first rotation, between rotations and after the last. */
const REQUESTS_PER_CERTIFICATE = 10;

let dir: string;
let ca: CertificateAuthority;
let operator: Operator;

/** Replaces both files atomically (rename), key first, as a Secret volume update would. */
async function writeServingCertificate(): Promise<string> {
  const pair = await issueCertificate(ca, { commonName: "pod-decorator", hosts: ["127.0.0.1"], usage: "server", validityDays: 1 });
  await writeFile(join(dir, "tls.key.new"), pair.keyPem);
  await writeFile(join(dir, "tls.crt.new"), pair.certPem);
  await rename(join(dir, "tls.key.new"), join(dir, "tls.key"));
  await rename(join(dir, "tls.crt.new"), join(dir, "tls.crt"));
  return new X509Certificate(pair.certPem).fingerprint256;
}

function servedFingerprint(port: number): Promise<string> {
  return new Promise((done, fail) => {
    const request = httpsRequest({ host: "127.0.0.1", port, path: "/healthz", ca: ca.certPem, agent: false }, (response) => {
      const socket = response.socket as unknown as { getPeerCertificate(): { fingerprint256: string } };
      const fingerprint = socket.getPeerCertificate().fingerprint256;
      response.resume();
      done(fingerprint);
    });
    request.on("error", fail);
    request.end();
  });
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "pod-decorator-tls-"));
  ca = await createCertificateAuthority("rotation-ca", 1);
  await writeFile(join(dir, "ca.crt"), ca.certPem);
  await writeServingCertificate();
  operator = await startOperator({
    tlsArgs: [`--tls-cert-file=${join(dir, "tls.crt")}`, `--tls-key-file=${join(dir, "tls.key")}`, `--tls-ca-file=${join(dir, "ca.crt")}`],
  });
});

afterAll(async () => {
  expect(await operator.stop()).toBe(0);
  await rm(dir, { recursive: true, force: true });
});

describe("serving certificate rotation", () => {
  test("loses no request while the certificate files are replaced three times", async ({ namespace }) => {
    const { core, custom } = clients();
    await custom.createNamespacedCustomObject({
      group: "apps.kusionstack.io",
      version: "v1alpha1",
      namespace,
      plural: "poddecorations",
      body: {
        apiVersion: "apps.kusionstack.io/v1alpha1",
        kind: "PodDecoration",
        metadata: { name: "sidecar" },
        spec: { selector: {}, template: { containers: [{ name: "sidecar", image: "sidecar:1" }] } },
      },
    });

    const dryRunPod = () => core.createNamespacedPod({
      namespace,
      dryRun: "All",
      body: { metadata: { generateName: "load-" }, spec: { containers: [{ name: "app", image: "app:1" }] } },
    });
    // The webhook's cache sees the decoration a moment after it is stored: load starts after that.
    await eventually(async () => ((await dryRunPod()).spec?.containers.length === 2 ? true : undefined), 15_000, "the webhook to know the decoration");

    let running = true;
    const outcomes: string[] = [];
    const worker = async () => {
      while (running) {
        try {
          const pod = await dryRunPod();
          outcomes.push(pod.spec?.containers.map((container) => container.name).join(",") ?? "");
        } catch (error) {
          outcomes.push(`error: ${error instanceof Error ? error.message : String(error)}`);
        }
      }
    };
    const load = Promise.all([worker(), worker(), worker()]);

    // Requests under every certificate: the load goes on until this many more have been answered.
    const answeredMore = (count: number) => {
      const before = outcomes.length;
      return eventually(() => Promise.resolve(outcomes.length >= before + count ? true : undefined), 30_000, `${count} more requests answered`);
    };
    const fingerprints: string[] = [];
    for (let rotation = 0; rotation < 3; rotation++) {
      await answeredMore(REQUESTS_PER_CERTIFICATE);
      const fingerprint = await writeServingCertificate();
      fingerprints.push(fingerprint);
      // The server polls its files; wait until new connections are offered the new certificate.
      await eventually(async () => ((await servedFingerprint(operator.port)) === fingerprint ? true : undefined), 10_000, `the server to offer certificate ${rotation + 1}`, 100);
    }
    await answeredMore(REQUESTS_PER_CERTIFICATE);
    running = false;
    await load;

    expect(await servedFingerprint(operator.port)).toBe(fingerprints.at(-1));
    expect(outcomes.length).toBeGreaterThan(30);
    expect(outcomes.filter((outcome) => outcome !== "sidecar,app")).toEqual([]);
    expect(operator.logs().match(/serving certificate reloaded/g)?.length ?? 0).toBeGreaterThanOrEqual(3);
  });
});
