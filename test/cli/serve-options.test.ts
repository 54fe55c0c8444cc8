import { describe, expect, it } from "vitest";
import { parseServeOptions } from "../../src/cli/serve-options.ts";
import { UsageError } from "../../src/cli/usage-error.ts";

describe("serve options", () => {
  it("applies the documented defaults", () => {
    const options = parseServeOptions(["--self-signed"], {});
    expect(options).toMatchObject({
      webhookHost: "0.0.0.0",
      webhookPort: 9443,
      metricsPort: 8080,
      tls: { selfSigned: true, hosts: ["127.0.0.1", "localhost"] },
      failurePolicy: "Fail",
      namespace: "pod-decorator-system",
      leaderElect: false,
      leaderElectionId: "pod-decorator",
      onDecorationError: "reject",
      podOpsLifecycle: true,
      lifecycleDrainDelayMs: 5000,
      lifecycleStuckAfterMs: 60_000,
      maxConnectionsPerSource: 512,
    });
  });

  it("reads the cap on connections from one address, a positive integer", () => {
    expect(parseServeOptions(["--self-signed", "--max-connections-per-source=2000"], {}).maxConnectionsPerSource).toBe(2000);
    expect(parseServeOptions(["--self-signed"], { POD_DECORATOR_MAX_CONNECTIONS_PER_SOURCE: "64" }).maxConnectionsPerSource).toBe(64);
    expect(() => parseServeOptions(["--self-signed", "--max-connections-per-source=0"], {})).toThrow(UsageError);
    expect(() => parseServeOptions(["--self-signed", "--max-connections-per-source=many"], {})).toThrow(/--max-connections-per-source: not a positive integer: "many"/);
  });

  it("reads the pod webhook's scope, with its own namespace always excluded", () => {
    expect(parseServeOptions(["--self-signed"], { POD_NAMESPACE: "platform" }).scope).toEqual({
      excludedNamespaces: ["kube-system", "kube-public", "kube-node-lease"],
      ownNamespace: "platform",
      certManagerNamespace: undefined,
      optIn: false,
      namespaceSelector: undefined,
      objectSelector: undefined,
    });
    const options = parseServeOptions([
      "--self-signed",
      "--excluded-namespaces=kube-system, monitoring",
      "--cert-manager-namespace=cert-manager",
      "--namespace-opt-in",
      '--pod-namespace-selector={"matchLabels":{"team":"a"}}',
      '--pod-object-selector={"matchExpressions":[{"key":"skip","operator":"DoesNotExist"}]}',
    ], {});
    expect(options.scope).toMatchObject({
      excludedNamespaces: ["kube-system", "monitoring"],
      certManagerNamespace: "cert-manager",
      optIn: true,
      namespaceSelector: { matchLabels: { team: "a" } },
      objectSelector: { matchExpressions: [{ key: "skip", operator: "DoesNotExist" }] },
    });
    expect(() => parseServeOptions(["--self-signed", "--pod-object-selector={"], {})).toThrow(/--pod-object-selector: not JSON/);
    expect(() => parseServeOptions(["--self-signed", '--pod-object-selector={"matchExpressions":[{"key":"a","operator":"Near"}]}'], {})).toThrow(/--pod-object-selector: not a valid label selector/);
  });

  it("reads the PodOpsLifecycle switch and durations", () => {
    const options = parseServeOptions(["--self-signed", "--pod-ops-lifecycle=false", "--lifecycle-drain-delay", "500ms", "--lifecycle-stuck-after", "2m"], {});
    expect(options).toMatchObject({ podOpsLifecycle: false, lifecycleDrainDelayMs: 500, lifecycleStuckAfterMs: 120_000 });
    expect(parseServeOptions(["--self-signed"], { POD_DECORATOR_LIFECYCLE_DRAIN_DELAY: "1.5s" }).lifecycleDrainDelayMs).toBe(1500);
  });

  it("reads POD_DECORATOR_* variables and lets flags win", () => {
    const env = { POD_DECORATOR_WEBHOOK_PORT: "10443", POD_DECORATOR_LEADER_ELECT: "true", POD_DECORATOR_SELF_SIGNED: "true", POD_NAMESPACE: "ops" };
    const options = parseServeOptions(["--webhook-port", "11443"], env);
    expect(options.webhookPort).toBe(11443);
    expect(options.leaderElect).toBe(true);
    expect(options.namespace).toBe("ops");
  });

  it("takes certificate files instead of a self-signed certificate", () => {
    const options = parseServeOptions(["--tls-cert-file", "/tls/tls.crt", "--tls-key-file", "/tls/tls.key"], {});
    expect(options.tls).toEqual({ certFile: "/tls/tls.crt", keyFile: "/tls/tls.key", caFile: undefined });
  });

  it.each([
    [[], /--tls-cert-file and --tls-key-file, or --self-signed/],
    [["--self-signed", "--tls-cert-file", "a"], /exclusive/],
    [["--self-signed", "--webhook-port", "99999"], /--webhook-port: not a port/],
    [["--self-signed", "--failure-policy", "Sometimes"], /--failure-policy: must be one of Fail, Ignore/],
    [["--self-signed", "--webhook-config-url", "http://127.0.0.1:9443"], /https only/],
    [["--self-signed", "--no-such-flag"], /no-such-flag/],
    [["--self-signed", "--lifecycle-drain-delay", "5"], /--lifecycle-drain-delay: expected a duration such as 500ms, 5s or 1m, got "5"/],
    [["--self-signed", "--pod-ops-lifecycle", "maybe"], /--pod-ops-lifecycle: expected true or false/],
    [["--tls-cert-file", "c", "--tls-key-file", "k", "--webhook-config-url", "https://127.0.0.1:9443"], /needs --tls-ca-file/],
  ])("rejects %j with a clear message", (argv, message) => {
    expect(() => parseServeOptions(argv, {})).toThrow(UsageError);
    expect(() => parseServeOptions(argv, {})).toThrow(message);
  });
});
