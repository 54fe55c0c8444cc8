// Issues the X.509 material pod-decorator needs: a CA and certificates it signs
// (webhook serving certificates; in tests also the API server's and an admin's).
// node:crypto cannot issue certificates, @peculiar/x509 does it on WebCrypto.
// @peculiar/x509 resolves its dependencies through tsyringe, which needs this polyfill first.
import "reflect-metadata";
import { webcrypto } from "node:crypto";
import { isIP } from "node:net";
import * as x509 from "@peculiar/x509";

type CryptoKey = webcrypto.CryptoKey;


const keyAlgorithm = { name: "ECDSA", namedCurve: "P-256" } as const;
const signingAlgorithm = { name: "ECDSA", hash: "SHA-256" } as const;
const day = 24 * 60 * 60 * 1000;

export interface KeyPairPem {
  certPem: string;
  keyPem: string;
}

export interface CertificateAuthority extends KeyPairPem {
  readonly certificate: x509.X509Certificate;
  readonly privateKey: CryptoKey;
}

export interface CertificateRequest {
  commonName: string;
  /** Subject organizations; Kubernetes reads them as the client's groups. */
  organizations?: readonly string[];
  /** DNS names and IP addresses for the subject alternative name. */
  hosts?: readonly string[];
  usage: "server" | "client";
  validityDays: number;
  now?: Date;
}

export async function createCertificateAuthority(
  commonName: string,
  validityDays: number,
  now = new Date(),
): Promise<CertificateAuthority> {
  const keys = await webcrypto.subtle.generateKey(keyAlgorithm, true, ["sign", "verify"]);
  const certificate = await x509.X509CertificateGenerator.createSelfSigned({
    name: distinguishedName(commonName, []),
    keys,
    serialNumber: serialNumber(),
    notBefore: new Date(now.getTime() - 5 * 60 * 1000),
    notAfter: new Date(now.getTime() + validityDays * day),
    signingAlgorithm,
    extensions: [
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  return {
    certificate,
    privateKey: keys.privateKey,
    certPem: certificate.toString("pem") + "\n",
    keyPem: await privateKeyPem(keys.privateKey),
  };
}

/** Loads a CA written earlier as PEM, so a restarted process keeps signing with it. */
export async function loadCertificateAuthority(pair: KeyPairPem): Promise<CertificateAuthority> {
  const certificate = new x509.X509Certificate(pair.certPem);
  const der = x509.PemConverter.decodeFirst(pair.keyPem);
  const privateKey = await webcrypto.subtle.importKey("pkcs8", der, keyAlgorithm, true, ["sign"]);
  return { certificate, privateKey, certPem: pair.certPem, keyPem: pair.keyPem };
}

export async function issueCertificate(ca: CertificateAuthority, request: CertificateRequest): Promise<KeyPairPem> {
  const now = request.now ?? new Date();
  const keys = await webcrypto.subtle.generateKey(keyAlgorithm, true, ["sign", "verify"]);
  const extensions: x509.Extension[] = [
    new x509.BasicConstraintsExtension(false, undefined, true),
    new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment, true),
    new x509.ExtendedKeyUsageExtension(
      [request.usage === "server" ? x509.ExtendedKeyUsage.serverAuth : x509.ExtendedKeyUsage.clientAuth],
      false,
    ),
    await x509.AuthorityKeyIdentifierExtension.create(ca.certificate.publicKey),
  ];
  const hosts = request.hosts ?? [];
  if (hosts.length > 0) {
    extensions.push(
      new x509.SubjectAlternativeNameExtension(
        hosts.map((host) => ({ type: isIP(host) === 0 ? ("dns" as const) : ("ip" as const), value: host })),
      ),
    );
  }
  const certificate = await x509.X509CertificateGenerator.create({
    subject: distinguishedName(request.commonName, request.organizations ?? []),
    issuer: ca.certificate.subject,
    publicKey: keys.publicKey,
    signingKey: ca.privateKey,
    serialNumber: serialNumber(),
    notBefore: new Date(now.getTime() - 5 * 60 * 1000),
    notAfter: new Date(now.getTime() + request.validityDays * day),
    signingAlgorithm,
    extensions,
  });
  return { certPem: certificate.toString("pem") + "\n", keyPem: await privateKeyPem(keys.privateKey) };
}

function distinguishedName(commonName: string, organizations: readonly string[]): x509.JsonName {
  return [{ CN: [commonName] }, ...organizations.map((organization) => ({ O: [organization] }))];
}

async function privateKeyPem(key: CryptoKey): Promise<string> {
  const der = await webcrypto.subtle.exportKey("pkcs8", key);
  return x509.PemConverter.encode(der, "PRIVATE KEY") + "\n";
}

function serialNumber(): string {
  // A positive 16-byte serial: clear the top bit so DER does not read it as negative.
  const bytes = webcrypto.getRandomValues(new Uint8Array(16));
  bytes[0] = (bytes[0] ?? 0) & 0x7f;
  return Buffer.from(bytes).toString("hex");
}
