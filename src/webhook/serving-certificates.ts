// Where the webhook's serving certificate comes from, and how it changes without a
// restart: files written by someone else (cert-manager, a Secret mount) that are
// reloaded when they change, or a CA and certificate this process issues and renews.
import { createPrivateKey, X509Certificate } from "node:crypto";
import { readFile } from "node:fs/promises";
import {
  createCertificateAuthority,
  issueCertificate,
  type CertificateAuthority,
  type KeyPairPem,
} from "./certificates.ts";

export interface ServingCertificates {
  current(): KeyPairPem;
  /** The PEM the API server must trust, when this process issued the certificate. */
  caBundle(): string | undefined;
  /** Called after every change with the new pair. */
  onChange(listener: (pair: KeyPairPem) => void): void;
  /** Reads or issues the pair again now, as the timer would. */
  renew(): Promise<void>;
  stop(): void;
}

interface Listeners {
  listeners: ((pair: KeyPairPem) => void)[];
}

function notify(state: Listeners, pair: KeyPairPem, onError: (error: unknown) => void): void {
  for (const listener of state.listeners) {
    try {
      listener(pair);
    } catch (error) {
      onError(error);
    }
  }
}

export interface FileCertificatesOptions {
  certFile: string;
  keyFile: string;
  pollIntervalMs?: number;
  onError?: (error: unknown) => void;
}

/**
 * Polls instead of fs.watch: Secret volumes swap a symlink, which inotify on the
 * file itself does not report. A half-written pair (cert and key not matching) is
 * ignored until both halves agree.
 */
export async function fileCertificates(options: FileCertificatesOptions): Promise<ServingCertificates> {
  const onError = options.onError ?? (() => {});
  const read = async (): Promise<KeyPairPem> => {
    const [certPem, keyPem] = await Promise.all([readFile(options.certFile, "utf8"), readFile(options.keyFile, "utf8")]);
    assertMatchingPair({ certPem, keyPem });
    return { certPem, keyPem };
  };
  let pair = await read();
  const state: Listeners = { listeners: [] };
  const renew = async () => {
    const next = await read();
    if (next.certPem === pair.certPem && next.keyPem === pair.keyPem) return;
    pair = next;
    notify(state, pair, onError);
  };
  let polling = false;
  const timer = setInterval(() => {
    if (polling) return;
    polling = true;
    renew()
      .catch(onError)
      .finally(() => (polling = false));
  }, options.pollIntervalMs ?? 2000);
  timer.unref();
  return {
    current: () => pair,
    caBundle: () => undefined,
    onChange: (listener) => void state.listeners.push(listener),
    renew,
    stop: () => clearInterval(timer),
  };
}

export interface SelfSignedOptions {
  /** DNS names and IPs the serving certificate is valid for. */
  hosts: readonly string[];
  /** The CA to sign with, shared with other replicas; a new one when omitted. */
  ca?: CertificateAuthority;
  caValidityDays?: number;
  certValidityDays?: number;
  /** Renew the serving certificate when this fraction of its lifetime has passed. */
  renewAtFraction?: number;
  onError?: (error: unknown) => void;
  now?: () => Date;
}

/** Certificates this process issues from a CA it holds, which it can be told to change. */
export interface SelfSignedCertificates extends ServingCertificates {
  authority(): CertificateAuthority;
  /** Signs with `ca` from now on: a serving certificate is issued from it at once. */
  useAuthority(ca: CertificateAuthority): Promise<void>;
}

/**
 * A CA that lives as long as the process (or longer than any serving certificate it
 * signs) and a serving certificate renewed well before expiry; the CA bundle stays the
 * same across renewals, so the webhook configurations need patching only once.
 */
export async function selfSignedCertificates(options: SelfSignedOptions): Promise<SelfSignedCertificates> {
  const now = options.now ?? (() => new Date());
  const onError = options.onError ?? (() => {});
  const certValidityDays = options.certValidityDays ?? 30;
  let ca: CertificateAuthority = options.ca ?? (await createWebhookCertificateAuthority(options.caValidityDays, now()));
  const issue = () =>
    issueCertificate(ca, {
      commonName: options.hosts[0] ?? "pod-decorator-webhook",
      hosts: options.hosts,
      usage: "server",
      validityDays: certValidityDays,
      now: now(),
    });
  let pair = await issue();
  const state: Listeners = { listeners: [] };
  const renewEveryMs = certValidityDays * 24 * 60 * 60 * 1000 * (options.renewAtFraction ?? 2 / 3);
  // setInterval cannot wait longer than ~24.8 days; renewal a day or more apart is fine.
  const renew = async () => {
    pair = await issue();
    notify(state, pair, onError);
  };
  const timer = setInterval(() => void renew().catch(onError), Math.min(renewEveryMs, 2 ** 31 - 1));
  timer.unref();
  return {
    current: () => pair,
    caBundle: () => ca.certPem,
    onChange: (listener) => void state.listeners.push(listener),
    renew,
    stop: () => clearInterval(timer),
    authority: () => ca,
    async useAuthority(next) {
      ca = next;
      await renew();
    },
  };
}

export function createWebhookCertificateAuthority(validityDays = 3650, now = new Date()): Promise<CertificateAuthority> {
  return createCertificateAuthority("pod-decorator-webhook-ca", validityDays, now);
}

function assertMatchingPair(pair: KeyPairPem): void {
  const certificate = new X509Certificate(pair.certPem);
  if (!certificate.checkPrivateKey(createPrivateKey(pair.keyPem))) {
    throw new Error("the serving certificate and key do not match");
  }
}
