import { describe, expect, it } from "vitest";
import { parseClusterArgs } from "../../src/cli/explain-cluster.ts";
import { UsageError } from "../../src/cli/usage-error.ts";

describe("explain's cluster arguments", () => {
  it("takes kind and name as kubectl does, in two words or as kind/name", () => {
    expect(parseClusterArgs(["pod", "web-0", "-n", "shop"])).toMatchObject({ kind: "pod", name: "web-0", namespace: "shop", output: "text", webhookConfiguration: "pod-decorator" });
    expect(parseClusterArgs(["pods/web-0"])).toMatchObject({ kind: "pod", name: "web-0", namespace: undefined });
    expect(parseClusterArgs(["pd", "logging", "-o", "yaml", "--context", "prod", "--kubeconfig", "/k", "--webhook-configuration", "release-pod-decorator"]))
      .toEqual({ kind: "poddecoration", name: "logging", namespace: undefined, output: "yaml", context: "prod", kubeconfig: "/k", webhookConfiguration: "release-pod-decorator" });
  });

  it.each([
    [[], "expected a kind"],
    [["pod"], "expected a kind"],
    [["deployment", "web"], 'unknown kind "deployment"'],
    [["pod", "web-0", "-o", "wide"], "-o wide: supported values: text, json, yaml"],
    [["pod", "web-0", "--frobnicate"], "--frobnicate"],
  ])("refuses %j with a usage error", (args, message) => {
    expect(() => parseClusterArgs(args)).toThrow(UsageError);
    expect(() => parseClusterArgs(args)).toThrow(message);
  });
});
