// The documentation's links hold: README.md and the pages under docs/ point only at files and
// headings that exist, every page is in the index, and every alert the chart installs has the
// runbook its runbook_url names.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { brokenLinks, headingAnchors, linkTargets } from "./markdown-links.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url)).replace(/\/$/, "");
const read = (path: string) => readFileSync(join(ROOT, path), "utf8");
const PAGES = readdirSync(join(ROOT, "docs"), { recursive: true, encoding: "utf8" })
  .filter((path) => path.endsWith(".md"))
  .map((path) => `docs/${path}`)
  .sort();

describe("headingAnchors", () => {
  it.each([
    ["## Quick start", ["quick-start"]],
    ["### `make demo`", ["make-demo"]],
    ["### `failurePolicy`: `Fail` or `Ignore`", ["failurepolicy-fail-or-ignore"]],
    ["### Scope, and why `Fail` cannot deadlock", ["scope-and-why-fail-cannot-deadlock"]],
    ["## Certificates (`certificates.mode`)", ["certificates-certificatesmode"]],
    ["## Rollout: partition and selector", ["rollout-partition-and-selector"]],
    ["## Health, metrics & logs", ["health-metrics--logs"]],
    ["## [Linked](other.md) and **bold** _text_", ["linked-and-bold-text"]],
    ["## PodDecorator<wbr>NoLeader", ["poddecoratornoleader"]],
    ["## PodDecoration `spec`\n\n## CollaSet `spec`\n\n## PodDecoration `spec`\n\n## PodDecoration `spec`", ["poddecoration-spec", "collaset-spec", "poddecoration-spec-1", "poddecoration-spec-2"]],
    ["Setext heading\n--------------", ["setext-heading"]],
    ["```yaml\n# group.yaml\n```\n\n    # indented code", []],
    ["- a list item\n\n  ## In a list", ["in-a-list"]],
  ])("%j has the anchors %j", (markdown, anchors) => {
    expect(headingAnchors(markdown)).toEqual(anchors);
  });
});

describe("linkTargets", () => {
  it("finds links in text, lists, table cells and by reference, but not in code", () => {
    const markdown = [
      "See [a](a.md) and [b][ref].",
      "",
      "- [c](c.md#x)",
      "",
      "| k | v |",
      "| --- | --- |",
      "| [d](#d) | `[no](no.md)` |",
      "",
      "```md",
      "[no](fenced.md)",
      "```",
      "",
      "[ref]: b.md#y",
    ].join("\n");
    expect(linkTargets(markdown)).toEqual(["a.md", "b.md#y", "c.md#x", "#d"]);
  });
});

describe("brokenLinks", () => {
  it("reports links to missing files, missing headings and outside the repository, and nothing else", () => {
    const root = mkdtempSync(join(tmpdir(), "pod-decorator-links-"));
    try {
      mkdirSync(join(root, "docs"));
      writeFileSync(join(root, "README.md"), "# Top\n\n[ok](docs/page.md#part-two) [own](#top) [dir](docs/) [web](https://example.com/x.md#nope)\n");
      writeFileSync(
        join(root, "docs/page.md"),
        "# Page\n\n## Part `two`\n\n[up](../README.md) [gone](gone.md) [no heading](../README.md#bottom) [self](#part-one) [out](../../elsewhere.md)\n",
      );
      expect(brokenLinks(root, [join(root, "README.md"), join(root, "docs/page.md")])).toEqual([
        { file: "docs/page.md", href: "gone.md", reason: "docs/gone.md does not exist" },
        { file: "docs/page.md", href: "../README.md#bottom", reason: "README.md has no heading with the anchor #bottom" },
        { file: "docs/page.md", href: "#part-one", reason: "docs/page.md has no heading with the anchor #part-one" },
        { file: "docs/page.md", href: "../../elsewhere.md", reason: "points outside the repository" },
      ]);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});

describe("the documentation", () => {
  it("links only to files and headings that exist, from README.md and every page under docs/", () => {
    expect(PAGES.length).toBeGreaterThan(0);
    expect(brokenLinks(ROOT, ["README.md", ...PAGES].map((path) => join(ROOT, path)))).toEqual([]);
  });

  it("lists every page under docs/ in its index, docs/README.md", () => {
    const linked = new Set(linkTargets(read("docs/README.md")).map((href) => `docs/${href.split("#")[0]}`));
    expect(PAGES.filter((page) => page !== "docs/README.md" && !linked.has(page))).toEqual([]);
  });
});

describe("the chart's alerts", () => {
  const template = read("charts/pod-decorator/templates/prometheusrule.yaml");
  const alerts = [...template.matchAll(/^ +- alert: (\w+)$/gm)].map((match) => match[1]!);
  // The base the template appends '#<alert, lowercased>' to when runbookBaseUrl is empty.
  const runbooks = /\$runbook := printf "%s#" \(\$rule\.runbookBaseUrl \| default "([^"]+)"\)/.exec(template)?.[1];

  it("each have a runbook: a heading of the default runbookBaseUrl's page named after the alert", () => {
    expect(alerts.length).toBeGreaterThan(0);
    expect(runbooks).toBe("docs/runbooks.md");
    // Each rule names its anchor by hand after the base.
    expect([...template.matchAll(/runbook_url: \{\{ \$runbook \}\}(\S+)$/gm)].map((match) => match[1])).toEqual(alerts.map((alert) => alert.toLowerCase()));
    const anchors = new Set(headingAnchors(read(runbooks!)));
    expect(alerts.filter((alert) => !anchors.has(alert.toLowerCase()))).toEqual([]);
  });

  it("are expected with those runbook URLs by the alert rule tests (test/alerts/alerts.test.yaml)", () => {
    interface RuleTest {
      alertname: string;
      exp_alerts?: { exp_annotations?: { runbook_url?: string } }[];
    }
    const suite = parse(read("test/alerts/alerts.test.yaml")) as { tests: { alert_rule_test?: RuleTest[] }[] };
    const expected = suite.tests.flatMap((test) =>
      (test.alert_rule_test ?? []).flatMap((rule) => (rule.exp_alerts ?? []).map((alert) => ({ alert: rule.alertname, url: alert.exp_annotations?.runbook_url }))),
    );
    expect(new Set(expected.map(({ alert }) => alert))).toEqual(new Set(alerts));
    expect(expected.filter(({ alert, url }) => url !== `${runbooks}#${alert.toLowerCase()}`)).toEqual([]);
  });
});
