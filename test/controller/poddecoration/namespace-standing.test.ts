// A decoration's standing among its namespace's others, as its status reports it: over the
// namespace's limit (inert, Ready False), and out-ranked by decorations already there — the
// platform's decoration created after the app team's, which admission could not stop.
import { describe, expect, it } from "vitest";
import type { PodDecoration } from "../../../src/api/poddecoration.ts";
import { NamespaceStandings } from "../../../src/controller/poddecoration/namespace-standing.ts";

const namespaceStanding = (decoration: PodDecoration, namespace: PodDecoration[], limit: number) => new NamespaceStandings(limit).of(decoration, namespace);
import { desiredStatus } from "../../../src/controller/poddecoration/status.ts";

function decoration(name: string, spec: Partial<PodDecoration["spec"]>, created: string): PodDecoration {
  return { apiVersion: "apps.kusionstack.io/v1alpha1", kind: "PodDecoration", metadata: { name, namespace: "shop", creationTimestamp: created, generation: 1 }, spec: { selector: {}, ...spec } };
}

const appTakeover = decoration("zz-takeover", { injectStrategy: { group: "zz" }, template: { containers: [{ name: "mesh-proxy", image: "app/proxy:1" }] } }, "2026-01-01T00:00:00Z");
const platform = decoration("mesh", { template: { containers: [{ name: "mesh-proxy", image: "platform/proxy:1" }] } }, "2026-01-02T00:00:00Z");
const unrelated = decoration("logs", { template: { containers: [{ name: "log-shipper", image: "logs:1" }] } }, "2026-01-03T00:00:00Z");

describe("namespaceStanding", () => {
  it("reports the decorations already there that out-rank a newer one, naming them and how", () => {
    const standing = namespaceStanding(platform, [appTakeover, platform, unrelated], 200);
    expect(standing.overLimit).toBeUndefined();
    expect(standing.conditions).toEqual([
      { type: "WithinNamespaceLimit", status: "True", reason: "WithinLimit", message: "namespace shop has 3 of at most 200 PodDecorations" },
      {
        type: "OutRanked",
        status: "True",
        reason: "OutRankedByOthers",
        message: 'out-ranked on the pods both can select by zz-takeover (would replace container "mesh-proxy" that shop/mesh injects): what they render there wins over this one\'s; they were written by someone allowed to, or before it',
      },
    ]);
    expect(namespaceStanding(unrelated, [appTakeover, platform, unrelated], 200).conditions[1]).toMatchObject({ type: "OutRanked", status: "False" });
  });

  it("makes the newest decoration over the limit not Ready, and says why", () => {
    const standing = namespaceStanding(unrelated, [appTakeover, platform, unrelated], 2);
    expect(standing.overLimit).toBe("namespace shop has 3 PodDecorations, more than the limit of 2: the newest 1 are not applied to new pods, and pods keep what they record of them");
    const status = desiredStatus({ decoration: unrelated, pods: [], updatedRevision: "logs-1", collisionCount: 0, templateValid: { type: "TemplateValid", status: "True", reason: "DryRunAccepted" }, now: "2026-02-01T00:00:00Z", standing });
    expect(status.conditions?.find((condition) => condition.type === "Ready")).toMatchObject({ status: "False", reason: "OverNamespaceLimit" });
    expect(status.conditions?.find((condition) => condition.type === "WithinNamespaceLimit")).toMatchObject({ status: "False", reason: "OverNamespaceLimit" });
    expect(namespaceStanding(platform, [appTakeover, platform, unrelated], 2).overLimit).toBeUndefined();
  });
});
