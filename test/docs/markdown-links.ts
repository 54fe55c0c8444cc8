// What the documentation's relative links point at, read as GitHub renders Markdown: headings
// become anchors by github-slugger (GitHub's own rules: lowercase, punctuation dropped, spaces to
// '-', a repeated heading suffixed -1, -2, …) over the heading's text as displayed, so code spans
// count by their content and links and emphasis by their text.
import { existsSync, readFileSync, statSync } from "node:fs";
import { dirname, relative, resolve, sep } from "node:path";
import GithubSlugger from "github-slugger";
import { Lexer, type MarkedToken, type Token, type Tokens } from "marked";

export interface BrokenLink {
  file: string;
  href: string;
  reason: string;
}

/** Every token of a Markdown document, nested ones (list items, table cells, emphasis) included. */
function* walk(tokens: readonly Token[]): Generator<Token> {
  for (const token of tokens) {
    yield token;
    const known = token as MarkedToken;
    if (known.type === "list") yield* walk(known.items);
    else if (known.type === "table") for (const cell of [...known.header, ...known.rows.flat()]) yield* walk(cell.tokens);
    else if ("tokens" in token && Array.isArray(token.tokens)) yield* walk(token.tokens);
  }
}

/** A heading's text as GitHub displays it: raw HTML and images show no text. */
function displayedText(tokens: readonly Token[]): string {
  return tokens
    .map((token) => {
      if (token.type === "html" || token.type === "image") return "";
      if ("tokens" in token && Array.isArray(token.tokens)) return displayedText(token.tokens);
      return "text" in token && typeof token.text === "string" ? token.text : "";
    })
    .join("");
}

/** The anchors GitHub gives a document's headings, in document order. */
export function headingAnchors(markdown: string): string[] {
  const slugger = new GithubSlugger();
  return [...walk(new Lexer().lex(markdown))].flatMap((token) => (token.type === "heading" ? [slugger.slug(displayedText((token as Tokens.Heading).tokens))] : []));
}

/** The targets of a document's links (inline and reference-style), outside code. */
export function linkTargets(markdown: string): string[] {
  return [...walk(new Lexer().lex(markdown))].flatMap((token) => (token.type === "link" ? [(token as Tokens.Link).href] : []));
}

const EXTERNAL = /^(?:[a-z][\d+.a-z-]*:|\/\/)/i;

/**
 * The relative links of `files` (absolute paths) that point at no file under `root`, or at a
 * heading a Markdown file does not have. Anchors into other kinds of file are not checked.
 */
export function brokenLinks(root: string, files: readonly string[]): BrokenLink[] {
  const anchors = new Map<string, Set<string>>();
  const anchorsOf = (file: string) => {
    let found = anchors.get(file);
    if (found === undefined) anchors.set(file, (found = new Set(headingAnchors(readFileSync(file, "utf8")))));
    return found;
  };
  const broken: BrokenLink[] = [];
  for (const file of files) {
    const from = relative(root, file);
    for (const href of linkTargets(readFileSync(file, "utf8"))) {
      if (EXTERNAL.test(href)) continue;
      const hash = href.indexOf("#");
      const path = decodeURIComponent(hash < 0 ? href : href.slice(0, hash));
      const anchor = hash < 0 ? undefined : decodeURIComponent(href.slice(hash + 1));
      const target = path === "" ? file : resolve(dirname(file), path);
      if (target !== root && !target.startsWith(root + sep)) broken.push({ file: from, href, reason: "points outside the repository" });
      else if (!existsSync(target)) broken.push({ file: from, href, reason: `${relative(root, target)} does not exist` });
      else if (anchor !== undefined && target.endsWith(".md") && statSync(target).isFile() && !anchorsOf(target).has(anchor)) {
        broken.push({ file: from, href, reason: `${relative(root, target)} has no heading with the anchor #${anchor}` });
      }
    }
  }
  return broken;
}
