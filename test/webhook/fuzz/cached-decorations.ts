// What the fuzzed webhook's caches hold: realistic decorations, and decorations written while
// no validating webhook was watching (before installation, or under an older, looser CRD) —
// semantically invalid ones and structurally broken ones. Frozen, as the informer hands them out.
import fc from "fast-check";
import type { PodDecoration } from "../../../src/api/poddecoration.ts";
import { deepFreeze } from "../../../src/controller/runtime/deep-freeze.ts";
import { specRevision } from "../../../src/revision/revision-data.ts";
import type { DecorationSource } from "../../../src/decoration/updated-revisions.ts";
import { typicalDecorations } from "../../bench/typical-workload.ts";
import { decorations as validDecorations } from "../../decoration/arbitraries.ts";

/** The identity the fuzzed webhook trusts as its controller; generated requests use it sometimes. */
export const FUZZ_CONTROLLER = "system:serviceaccount:pod-decorator-system:pod-decorator";

/** Namespaces the generated pods are created in; "empty" has no decorations. */
export const POD_NAMESPACES = ["bench", "shop", "legacy", "broken", "empty"] as const;

function pd(namespace: string, name: string, spec: unknown, metadata: Record<string, unknown> = {}): PodDecoration {
  return {
    apiVersion: "apps.kusionstack.io/v1alpha1",
    kind: "PodDecoration",
    metadata: { name, namespace, uid: `uid-${namespace}-${name}`, creationTimestamp: "2026-01-01T00:00:00Z", generation: 1, ...metadata },
    spec,
  } as PodDecoration;
}

const sidecar = (name: string) => ({ containers: [{ name, image: `example.com/${name}:1` }] });

/** Pass the CRD schema, fail validatePodDecoration. */
function legacy(): PodDecoration[] {
  const ns = "legacy";
  return [
    pd(ns, "partition-and-selector", { selector: { matchLabels: { app: "web" } }, updateStrategy: { rollingUpdate: { partition: 1, selector: { matchLabels: { track: "canary" } } } }, template: sidecar("canary-proxy") }),
    pd(ns, "merge-labels", { selector: {}, template: { metadata: [{ patchPolicy: "MergePatchJson", labels: { team: "x" } }] } }),
    pd(ns, "duplicate-sidecars", { selector: { matchLabels: { tier: "frontend" } }, template: { containers: [{ name: "dup", image: "a:1" }, { name: "dup", image: "b:1" }] } }),
    pd(ns, "bad-label-key", { selector: { matchLabels: { "bad key!": "x" } }, template: sidecar("never") }),
    pd(ns, "in-without-values", { selector: { matchExpressions: [{ key: "app", operator: "In" }] }, template: sidecar("never-either") }),
    pd(ns, "bad-runtime-class", { selector: { matchLabels: { app: "api" } }, template: { runtimeClassName: "Not_Valid" } }),
    pd(ns, "garbage-revision", { selector: { matchLabels: { track: "canary" } }, template: sidecar("stored") }),
    pd(ns, `long-${"n".repeat(248)}`, { selector: { matchLabels: { app: "web" } }, injectStrategy: { group: "mesh", weight: 1 }, template: sidecar("long-named") }),
    pd(ns, "valid-logging", { selector: { matchLabels: { app: "web" } }, injectStrategy: { group: "mesh", weight: 1 }, template: sidecar("logging") }),
  ];
}

/** Would not even pass today's CRD schema: a looser schema (or none) let them in. */
function broken(): PodDecoration[] {
  const ns = "broken";
  const protoContainer = JSON.parse('{"name": "proto", "image": "p:1", "__proto__": {"polluted": "yes"}}') as unknown;
  return [
    pd(ns, "valid-sidecar", { selector: { matchLabels: { app: "web" } }, template: sidecar("ok-sidecar") }),
    pd(ns, "no-selector", { template: sidecar("unselected") }),
    pd(ns, "string-selector", { selector: "app=web", template: sidecar("string-selected") }),
    pd(ns, "expressions-object", { selector: { matchExpressions: { key: "app", operator: "Exists" } }, template: sidecar("object-expressions") }),
    pd(ns, "labels-array", { selector: { matchLabels: ["app", "web"] }, template: sidecar("array-labels") }),
    pd(ns, "null-expression", { selector: { matchExpressions: [null] }, template: sidecar("null-expression") }),
    pd(ns, "string-weight", { selector: { matchLabels: { tier: "frontend" } }, injectStrategy: { group: "g", weight: "high" }, template: sidecar("heavy") }),
    pd(ns, "containers-string", { selector: { matchLabels: { app: "api" } }, template: { containers: "sidecar" } }),
    pd(ns, "bad-timestamp", { selector: { matchLabels: { track: "canary" } }, template: sidecar("timeless") }, { creationTimestamp: "yesterday" }),
    pd(ns, "proto-key", { selector: { matchLabels: { app: "frontend" } }, template: { containers: [protoContainer] } }),
    pd(ns, "null-template", { selector: { matchLabels: { tier: "api" } }, template: null }),
  ];
}

/** Generated valid decorations, the same every run. */
function shop(): PodDecoration[] {
  return fc.sample(validDecorations, { numRuns: 4, seed: 20_261_121 }).flatMap((sample, run) =>
    sample.map((decoration) => ({ ...decoration, metadata: { ...decoration.metadata, name: `run${run}-${decoration.metadata.name ?? ""}`, namespace: "shop" } })),
  );
}

export function cachedDecorations(): DecorationSource {
  const all = deepFreeze([...typicalDecorations(), ...shop(), ...legacy(), ...broken()]);
  const byNamespace = new Map<string, PodDecoration[]>();
  for (const decoration of all) {
    const namespace = decoration.metadata.namespace ?? "default";
    byNamespace.set(namespace, [...(byNamespace.get(namespace) ?? []), decoration]);
  }
  const garbage = all.find((decoration) => decoration.metadata.name === "garbage-revision")!;
  // A ControllerRevision under the name the live spec hashes to, holding something else.
  const revisions = new Map<string, unknown>([[`legacy/${specRevision(garbage).name}`, deepFreeze({ template: "not a template", injectStrategy: [] })]]);
  return {
    decorations: (namespace) => byNamespace.get(namespace) ?? [],
    revisionData: (namespace, name) => revisions.get(`${namespace}/${name}`),
  };
}
