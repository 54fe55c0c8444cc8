// Properties of the engine over generated pods and valid decorations: it never throws, never
// touches its input, re-rendering changes nothing, container names stay unique, every label
// stays valid, and the JSON Patch the webhook would return reproduces the rendered pod (and is
// the same whether or not the rendered pod shares what rendering left alone with the input).
import fc from "fast-check";
import jsonpatch from "fast-json-patch";
import { describe, expect, it } from "vitest";
import { cloneJson } from "../../src/api/json.ts";
import { isLabelValue, isQualifiedName } from "../../src/api/names.ts";
import { podWithoutNullFields } from "../../src/api/null-fields.ts";
import type { Pod } from "../../src/api/pod.ts";
import { type PodDecoration, validatePodDecoration } from "../../src/api/poddecoration.ts";
import { type DecorateResult, decoratePod, liveRevision } from "../../src/decoration/decorate.ts";
import { DecorationError } from "../../src/decoration/decoration-error.ts";
import { podConsistencyProblems } from "../../src/decoration/pod-consistency.ts";
import { REVISIONS_ANNOTATION } from "../../src/decoration/recording.ts";
import { createJsonPatch } from "../../src/webhook/json-patch.ts";
import { decorations, pod } from "./arbitraries.ts";

const RUNS = { numRuns: 300 };

function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

/**
 * The render, or undefined when a decoration cannot go into this pod (a mount of a volume the
 * pod does not provide): then the properties below hold vacuously, and the one about refusals
 * says when that may happen.
 */
function decorate(input: Pod, all: readonly PodDecoration[]): DecorateResult | undefined {
  try {
    return decoratePod(input, all, liveRevision);
  } catch (error) {
    if (error instanceof DecorationError) return undefined;
    throw error;
  }
}

function containerNames(rendered: Pod): string[] {
  return [...(rendered.spec?.initContainers ?? []), ...(rendered.spec?.containers ?? [])].map((container) => container.name);
}

describe("rendering properties", () => {
  it("generates only valid decorations", () => {
    fc.assert(fc.property(decorations, (generated) => {
      for (const decoration of generated) expect(validatePodDecoration(decoration)).toEqual([]);
    }), RUNS);
  });

  it("never throws but a DecorationError, and never mutates its (frozen) input", () => {
    fc.assert(fc.property(pod, decorations, (input, all) => {
      const before = structuredClone(input);
      decorate(deepFreeze(input), deepFreeze(all));
      expect(input).toEqual(before);
    }), RUNS);
  });

  it("refuses a decoration only for a problem it brings, and otherwise renders a consistent pod", () => {
    let refused = 0;
    fc.assert(fc.property(pod, decorations, (input, all) => {
      const before = new Set(podConsistencyProblems(input));
      try {
        const result = decoratePod(input, all, liveRevision);
        for (const problem of podConsistencyProblems(result.pod)) expect(before.has(problem), problem).toBe(true);
      } catch (error) {
        expect(error).toBeInstanceOf(DecorationError);
        refused++;
        // The message names the decoration and each problem it brings, none the pod had.
        expect((error as Error).message).toMatch(/^PodDecoration [^/]+\/[^:]+: rendering revision \S+ into this pod/);
        for (const problem of before) expect((error as Error).message).not.toContain(problem);
      }
    }), RUNS);
    // The generators make both kinds: a run where nothing is ever refused tests nothing.
    expect(refused).toBeGreaterThan(0);
  });

  it("is deterministic", () => {
    fc.assert(fc.property(pod, decorations, (input, all) => {
      expect(decorate(input, all)).toEqual(decorate(structuredClone(input), structuredClone(all)));
    }), RUNS);
  });

  it("is idempotent: rendering a rendered pod changes nothing", () => {
    fc.assert(fc.property(pod, decorations, (input, all) => {
      const once = decorate(input, all);
      if (once === undefined) return;
      const twice = decoratePod(once.pod, all, liveRevision);
      expect(twice.pod).toEqual(once.pod);
      expect(twice.applied).toEqual([]);
    }), RUNS);
  });

  it("keeps container names unique across init and regular containers", () => {
    fc.assert(fc.property(pod, decorations, (input, all) => {
      const once = decorate(input, all);
      if (once === undefined) return;
      const names = containerNames(once.pod);
      expect(new Set(names).size).toBe(names.length);
    }), RUNS);
  });

  it("keeps every label key and value valid, and records what it applied", () => {
    fc.assert(fc.property(pod, decorations, (input, all) => {
      const result = decorate(input, all);
      if (result === undefined) return;
      for (const [key, value] of Object.entries(result.pod.metadata?.labels ?? {})) {
        expect(isQualifiedName(key), key).toBe(true);
        expect(isLabelValue(value), value).toBe(true);
      }
      if (result.applied.length > 0) {
        const recorded = JSON.parse(result.pod.metadata?.annotations?.[REVISIONS_ANNOTATION] ?? "[]") as { name: string }[];
        expect(recorded.map((entry) => entry.name)).toEqual(expect.arrayContaining(result.applied.map((entry) => entry.name)));
      }
    }), RUNS);
  });

  it("never drops a toleration the pod had, and adds no toleration twice", () => {
    fc.assert(fc.property(pod, decorations, (input, all) => {
      const result = decorate(input, all);
      if (result === undefined) return;
      const rendered = result.pod.spec?.tolerations ?? [];
      const before = input.spec?.tolerations ?? [];
      expect(rendered.slice(0, before.length)).toEqual(before);
      const added = rendered.slice(before.length).map((toleration) => JSON.stringify(toleration));
      expect(new Set(added).size).toBe(added.length);
      for (const toleration of added) expect(before.map((item) => JSON.stringify(item))).not.toContain(toleration);
    }), RUNS);
  });

  it("makes the decoration's env value the one that takes effect (the last definition of its name)", () => {
    fc.assert(fc.property(pod, decorations, (input, all) => {
      const result = decorate(input, all);
      if (result === undefined) return;
      const applied = new Set(result.applied.map((entry) => entry.name));
      // The value each container sees: the last definition of a name.
      const effective = (env: readonly { name: string; value?: string }[] | undefined) => new Map((env ?? []).map((variable) => [variable.name, variable.value]));
      const byName = new Map((result.pod.spec?.containers ?? []).map((container) => [container.name, effective(container.env)]));
      // Rendering order: the last decoration to set a variable on a container wins; replay it.
      const expected = new Map<string, Map<string, string | undefined>>();
      const ordered = all.filter((decoration) => applied.has(decoration.metadata.name ?? "")).sort((a, b) =>
        result.applied.findIndex((entry) => entry.name === a.metadata.name) - result.applied.findIndex((entry) => entry.name === b.metadata.name));
      const primaries = (input.spec?.containers ?? []).map((container) => container.name);
      for (const decoration of ordered) {
        for (const patch of decoration.spec.template?.primaryContainers ?? []) {
          const policy = patch.targetPolicy ?? (patch.name === undefined ? "All" : "ByName");
          const targets = policy === "ByName" ? primaries.filter((name) => name === patch.name) : policy === "All" ? primaries : policy === "First" ? primaries.slice(0, 1) : primaries.slice(-1);
          for (const target of targets) for (const variable of patch.env ?? []) (expected.get(target) ?? expected.set(target, new Map()).get(target)!).set(variable.name, variable.value);
        }
        // A sidecar replacing a primary container by name brings its own env.
        for (const sidecar of decoration.spec.template?.containers ?? []) if (primaries.includes(sidecar.name)) expected.set(sidecar.name, effective(sidecar.env));
      }
      for (const [container, variables] of expected) {
        for (const [name, value] of variables) expect(byName.get(container)?.get(name), `${container}.${name}`).toBe(value);
      }
    }), RUNS);
  });

  it("shares only what it left alone with the pod, so the patch is the one two separate copies give", () => {
    fc.assert(fc.property(pod, decorations, (input, all) => {
      const result = decorate(input, all);
      if (result === undefined) return;
      const read = podWithoutNullFields(input);
      expect(createJsonPatch(read, result.pod)).toEqual(createJsonPatch(cloneJson(read), cloneJson(result.pod)));
    }), RUNS);
  });

  it("produces a JSON Patch that applies cleanly to the original and reproduces the rendered pod", () => {
    fc.assert(fc.property(pod, decorations, (input, all) => {
      const result = decorate(input, all);
      if (result === undefined) return;
      const rendered = result.pod;
      const patch = createJsonPatch(input, rendered);
      const patched = jsonpatch.applyPatch(structuredClone(input), patch, true, false).newDocument;
      expect(patched).toEqual(JSON.parse(JSON.stringify(rendered)));
    }), RUNS);
  });
});
