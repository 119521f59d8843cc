import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Marked } from "marked";
import { readCommittedOpenapi } from "../api/openapi/openapiFile.js";
import { errorsPageBody } from "./errorsPage.js";

/**
 * The documentation site (`{docs_url}` of the spec) as static files: guides written in Markdown (`pages/`), the
 * errors page generated from the error catalog, and the API reference rendered in the browser by Scalar from the
 * committed OpenAPI document. The gateway serves it at `/docs` from memory (api/docs/serveDocs.ts); `npm run
 * docs:build` writes the same files to `docs-site/dist/` for any static host. Every page sits at the root of the
 * site, so relative links work wherever it is hosted, and `<name>.html` is also reachable as `<name>` (the form
 * error bodies link to: `{docs_url}/errors#<code>`).
 */

export interface DocsFile {
  contentType: string;
  body: string | Buffer;
}

/** File name (relative to the site root) → content. */
export type DocsSite = Map<string, DocsFile>;

export interface DocsSiteOptions {
  /** The API's public root, shown in the examples (`{base_url}`); the gateway's PUBLIC_BASE_URL. */
  apiBaseUrl: string;
}

/** The pages, in the navigation's order: name (file `<name>.html`), title, source. */
export const DOCS_PAGES = [
  { name: "index", title: "Overview", source: "markdown" },
  { name: "quickstart", title: "Quickstart", source: "markdown" },
  { name: "streaming", title: "Streaming and the charge", source: "markdown" },
  { name: "jobs", title: "Jobs and verifying a charge", source: "markdown" },
  { name: "disputes", title: "Disputes", source: "markdown" },
  { name: "webhooks", title: "Webhooks", source: "markdown" },
  { name: "limits", title: "Limits and errors", source: "markdown" },
  { name: "errors", title: "Error codes", source: "catalog" },
  { name: "reference", title: "API reference", source: "openapi" },
  { name: "worker", title: "Running a worker", source: "markdown" },
  { name: "deploy", title: "Deploying the contracts", source: "markdown" },
] as const;
export type DocsPageName = (typeof DOCS_PAGES)[number]["name"];

const HERE = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(import.meta.url);
/** Scalar's standalone browser bundle: one file, no network needed (fonts off, telemetry off: reference.js). */
const SCALAR_BUNDLE = path.join(path.dirname(require.resolve("@scalar/api-reference")), "browser", "standalone.js");

const HTML = "text/html; charset=utf-8";

export async function buildDocsSite(options: DocsSiteOptions): Promise<DocsSite> {
  const site: DocsSite = new Map();
  const marked = new Marked({ gfm: true });
  // Headings get ids from their text, so a guide's sections can be linked (`limits.html#body-size`).
  marked.use({
    renderer: {
      heading({ tokens, depth, text }) {
        const id = slugOf(text);
        return `<h${depth} id="${id}"><a class="anchor" href="#${id}">${this.parser.parseInline(tokens)}</a></h${depth}>\n`;
      },
    },
  });
  for (const page of DOCS_PAGES) {
    let body: string;
    if (page.source === "markdown") {
      const markdown = await readFile(path.join(HERE, "pages", `${page.name}.md`), "utf8");
      body = await marked.parse(markdown.replaceAll("{base_url}", options.apiBaseUrl));
    } else if (page.source === "catalog") {
      body = errorsPageBody();
    } else {
      // Scalar renders into this element (an id of `api-reference` would be taken for its legacy script tag).
      body =
        '<div id="reference-root"></div><p class="credit">Rendered from <a href="openapi.json">openapi.json</a> ' +
        "by Scalar (<code>@scalar/api-reference</code>, MIT).</p>";
    }
    site.set(`${page.name}.html`, { contentType: HTML, body: layout(page.name, page.title, body) });
  }
  site.set("style.css", { contentType: "text/css; charset=utf-8", body: await readFile(path.join(HERE, "style.css")) });
  site.set("openapi.json", { contentType: "application/json", body: readCommittedOpenapi() });
  site.set("assets/scalar.js", { contentType: "text/javascript; charset=utf-8", body: await readFile(SCALAR_BUNDLE) });
  site.set("assets/reference.js", {
    contentType: "text/javascript; charset=utf-8",
    body: await readFile(path.join(HERE, "reference.js")),
  });
  return site;
}

/** `Jobs and verifying` → `jobs-and-verifying`. */
export function slugOf(text: string): string {
  return text
    .toLowerCase()
    .replace(/<[^>]+>/g, "")
    .replace(/&[a-z]+;|&#\d+;/g, "")
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-|-$/g, "");
}

export const escapeHtml = (text: string): string =>
  text.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;").replaceAll('"', "&quot;");

function layout(name: DocsPageName, title: string, body: string): string {
  const nav = DOCS_PAGES.map(
    (page) =>
      `<li><a href="${page.name}.html"${page.name === name ? ' aria-current="page"' : ""}>${escapeHtml(page.title)}</a></li>`,
  ).join("");
  const reference = name === "reference";
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} · Credit-metered inference API</title>
<link rel="stylesheet" href="style.css">
<link rel="icon" href="data:,">
</head>
<body class="${reference ? "reference" : "guide"}">
<nav class="site-nav" aria-label="Documentation"><a class="brand" href="index.html">Credit-metered inference API</a><ul>${nav}</ul></nav>
<main>${body}</main>
${reference ? '<script src="assets/scalar.js" charset="utf-8"></script>\n<script src="assets/reference.js" charset="utf-8"></script>' : ""}
</body>
</html>
`;
}
