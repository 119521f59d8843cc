import { errorCatalog, errorCodes, retryAdviceOf, type ErrorCode } from "@credit-metered/client/http";
import { ENDPOINTS, type Endpoint } from "../api/endpoints/index.js";
import { errorCodesOf } from "../api/openapi/openapiDocument.js";
import { escapeHtml } from "./site.js";

/**
 * The errors page (`{docs_url}/errors`): one section per code of the error catalog, its id the code, so the link
 * every error body carries (`error.docs` = `{docs_url}/errors#<code>`) lands on it. Every fact comes from the catalog
 * (status, type, default message, when, `details`, retry advice) or from the endpoints' OpenAPI declarations (which
 * operations answer it); nothing is restated here.
 */
export function errorsPageBody(): string {
  const answeredBy = operationsByCode(ENDPOINTS as readonly Endpoint<never>[]);
  const sections = errorCodes.map((code) => codeSection(code, answeredBy.get(code) ?? []));
  const index = errorCodes
    .map((code) => `<li><a href="#${code}"><code>${code}</code></a> ${errorCatalog[code].status}</li>`)
    .join("");
  return `<h1 id="error-codes">Error codes</h1>
<p>Every failure has the same body. <code>error.docs</code> links to this page at the code's anchor.</p>
<pre><code>{
  "error": {
    "code": "insufficient_credits",
    "message": "The credit balance is too low for this request.",
    "type": "payment_error",
    "param": null,
    "docs": "{docs_url}/errors#insufficient_credits",
    "details": { "credits_remaining": 3, "credits_required": 8, "tier": "standard" }
  }
}</code></pre>
<p><strong>Retry rules</strong> (spec): every 5xx answer and <code>no_workers_available</code> are safe to retry; for
<code>no_workers_available</code>, wait <code>details.retry_after</code> seconds. Any other 4xx will not succeed when
retried with the same payload. Where a code differs (a burst limit, an idempotent request still running), its
section says so. How limits and errors fit together: <a href="limits.html">Limits and errors</a>.</p>
<ul class="code-index">${index}</ul>
${sections.join("\n")}`;
}

function codeSection(code: ErrorCode, operations: string[]): string {
  const entry: (typeof errorCatalog)[ErrorCode] & { details?: Record<string, string> } = errorCatalog[code];
  const details = entry.details
    ? `<table><thead><tr><th>field</th><th>holds</th></tr></thead><tbody>${Object.entries(entry.details)
        .map(([field, what]) => `<tr><td><code>${field}</code></td><td>${inline(what)}</td></tr>`)
        .join("")}</tbody></table>`
    : "none";
  const answered =
    operations.length > 0
      ? operations.map((operation) => `<code>${escapeHtml(operation)}</code>`).join(", ")
      : "Not tied to one <code>/v1</code> operation (any path, or the web application's backend).";
  return `<section class="error-code" id="${code}">
<h2><a class="anchor" href="#${code}"><code>${code}</code></a></h2>
<dl>
<dt>Status</dt><dd>${entry.status}</dd>
<dt>Type</dt><dd><code>${entry.type}</code></dd>
<dt>When</dt><dd>${inline(entry.when)}</dd>
<dt>Message</dt><dd>${inline(entry.message)}</dd>
<dt><code>details</code></dt><dd>${details}</dd>
<dt>Retry</dt><dd>${inline(retryAdviceOf(code))}</dd>
<dt>Answered by</dt><dd>${answered}</dd>
</dl>
</section>`;
}

/** Code → the `/v1` operations (`METHOD /path`) whose declaration lists it. */
function operationsByCode(endpoints: readonly Endpoint<never>[]): Map<ErrorCode, string[]> {
  const byCode = new Map<ErrorCode, string[]>();
  for (const endpoint of endpoints) {
    if (!endpoint.openapi) continue;
    const operation = `${endpoint.method.toUpperCase()} ${endpoint.path.replace(/:([A-Za-z_]+)/g, "{$1}")}`;
    for (const code of errorCodesOf(endpoint)) byCode.set(code, [...(byCode.get(code) ?? []), operation]);
  }
  return byCode;
}

/** Catalog prose: HTML-escaped, with `code spans`. */
const inline = (text: string): string => escapeHtml(text).replace(/`([^`]+)`/g, "<code>$1</code>");
