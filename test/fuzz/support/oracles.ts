import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import ipaddr from "ipaddr.js";
import { errorCatalog } from "@credit-metered/client/http";
import { ResponseValidator } from "../../../api/openapi/responseValidator.js";
import { sseData } from "../../support/api.js";
import { matchTemplate, type FuzzCase } from "./fuzzCase.js";
import { asksForClose, type RawAnswer, type RawRequest } from "./rawHttp.js";
import type { JsonSchema } from "./schemaArbitrary.js";

/**
 * The spec's error table (spec, Errors → Codes): the status each spec code comes with. Product codes (404/409/…
 * cases the spec leaves open) take theirs from the error catalog, which the OpenAPI document lists too.
 */
export const SPEC_ERROR_STATUS: Record<string, number> = {
  invalid_api_key: 401,
  missing_api_key: 401,
  key_suspended: 403,
  insufficient_credits: 402,
  model_not_found: 400,
  no_workers_available: 503,
  job_timeout: 504,
  invalid_request: 400,
  context_length_exceeded: 400,
  dispute_window_expired: 422,
};

/** Statuses an HTTP server answers before any route (framing, sizes, methods): every path may give them. */
export const PROTOCOL_STATUSES = new Set([400, 405, 411, 413, 414, 415, 417, 431]);

export type Violation = { kind: string; detail: string };

type OpenApi = {
  info: { "x-max-json-depth"?: number };
  paths: Record<string, Record<string, { parameters?: { name: string; in: string; schema: JsonSchema }[] }>>;
  components: { schemas: Record<string, JsonSchema> };
};

/** Judges answers against the served OpenAPI document, the spec's error table and each request's intent. */
export class Oracles {
  readonly validator: ResponseValidator;
  readonly templates: string[];
  private readonly doc: OpenApi;
  private readonly ajv = new Ajv2020({ allErrors: false, strict: false });
  private readonly chatRequest: ValidateFunction;
  private readonly webhookRequest: ValidateFunction;
  private readonly queryParams = new Map<string, ValidateFunction>();

  constructor(
    documentText: string,
    private readonly listedModels: string[],
  ) {
    this.validator = new ResponseValidator(documentText);
    this.doc = JSON.parse(documentText) as OpenApi;
    this.templates = Object.keys(this.doc.paths);
    const defs = this.doc.components.schemas;
    this.ajv.addSchema({
      $id: "doc",
      $defs: JSON.parse(JSON.stringify(defs).replaceAll("#/components/schemas/", "doc#/$defs/")) as unknown,
    });
    this.chatRequest = this.ajv.compile({ $ref: "doc#/$defs/ChatCompletionRequest" });
    this.webhookRequest = this.ajv.compile({ $ref: "doc#/$defs/WebhookCreateRequest" });
    for (const parameter of this.doc.paths["/v1/jobs"]?.get?.parameters ?? [])
      if (parameter.in === "query") this.queryParams.set(parameter.name, this.ajv.compile(parameter.schema));
  }

  /** Methods the document gives a path template. */
  methodsOf(template: string): string[] {
    return Object.keys(this.doc.paths[template] ?? {}).map((method) => method.toUpperCase());
  }

  /** Every violation of one answer. */
  check(fuzzCase: FuzzCase, request: RawRequest, answer: RawAnswer): Violation[] {
    const violations: Violation[] = [];
    const add = (kind: string, detail: string) => violations.push({ kind, detail });
    const rawPath = request.target.split("?")[0] ?? "";
    const template = matchTemplate(this.templates, rawPath);
    const method = request.method.toUpperCase();
    const documented = template !== undefined && this.methodsOf(template).includes(method);
    const contentType = answer.headers["content-type"]?.[0];
    const isHead = method === "HEAD";

    if (answer.status >= 500) add("5xx", `answered ${answer.status}`);
    if (!answer.closedAfter && asksForClose(request))
      add(
        "connection-close",
        `the request said Connection: close; the server kept the connection open after the answer (connection: ${answer.headers["connection"]?.join(",") ?? "(none)"}; RFC 9112 §9.6)`,
      );
    let json: unknown;
    if (contentType?.startsWith("application/json") && !isHead) {
      try {
        json = JSON.parse(answer.text);
      } catch {
        add("bad-json", "content-type application/json but the body is not JSON");
      }
    }
    if (answer.status >= 400 && !isHead) this.checkErrorBody(answer, json, add);
    // An answer of the HTTP server itself (a parser's 400, 431, 417, CONNECT's 405), or a conditional 304: judged
    // above (its format), not as the operation's answer: the request never reached a route, so the operation's
    // oracles do not apply. Every routed answer carries `x-request-id` (api/http/middleware/requestId.ts); the
    // server's own answers (api/http/clientError.ts) do not, and a non-JSON error cannot come from a route either.
    const routed = answer.headers["x-request-id"] !== undefined;
    const serverLevel =
      (answer.status >= 400 && (!routed || !contentType?.startsWith("application/json"))) || answer.status === 304;
    if (serverLevel) return violations;
    if (documented && !isHead) {
      const isStream = contentType?.startsWith("text/event-stream") ?? false;
      const exempt = PROTOCOL_STATUSES.has(answer.status) && answer.status !== 400;
      if (!exempt) {
        const problems = this.validator.check({
          method,
          path: template,
          status: answer.status,
          contentType,
          body: isStream ? answer.text : json,
        });
        for (const problem of problems) add(problem.includes("not documented") ? "undocumented" : "schema", problem);
      }
      if (isStream && answer.status === 200) this.checkStream(answer, add);
    }
    if (template !== undefined && !documented && method !== "HEAD")
      this.checkWrongMethod(fuzzCase, template, answer, add);
    if (template === undefined && /^\/v\d+(\/|$)/i.test(rawPath)) {
      const authFirst = fuzzCase.key === undefined && /^\/v1(\/|$)/i.test(rawPath) && answer.status === 401;
      if (answer.status !== 404 && !authFirst)
        add("unknown-api-path", `an unknown path under /v<n>/ answered ${answer.status} (expected a JSON 404)`);
    }
    this.checkIntent(fuzzCase, answer, json, add);
    return violations;
  }

  private checkErrorBody(answer: RawAnswer, json: unknown, add: (kind: string, detail: string) => void): void {
    const contentType = answer.headers["content-type"]?.[0] ?? "(none)";
    if (!contentType.startsWith("application/json")) {
      add(
        "error-format",
        `${answer.status} with content-type ${contentType} and a ${answer.body.length}-byte body, not the spec's error body`,
      );
      return;
    }
    const errorSchema = this.validator.schema("Error");
    if (!errorSchema(json)) {
      add(
        "error-format",
        `${answer.status} body is not the spec's error body: ${this.ajv.errorsText(errorSchema.errors)}`,
      );
      return;
    }
    const { code, docs } = (json as { error: { code: string; docs: string } }).error;
    const expected =
      SPEC_ERROR_STATUS[code] ?? (errorCatalog as Record<string, { status: number } | undefined>)[code]?.status;
    if (expected !== undefined && expected !== answer.status)
      add("error-status", `code ${code} came with ${answer.status}; the spec's table gives ${expected}`);
    if (!docs.endsWith(`/errors#${code}`)) add("error-format", `docs ${docs} does not link /errors#${code}`);
    // Issue 23 item 9: `1e309` was refused with "expected number, received number", which explains nothing.
    const { message } = (json as { error: { message: string } }).error;
    if (/expected (\w+), received \1\b/.test(message))
      add("error-message", `a message that contradicts itself: ${message}`);
  }

  private checkStream(answer: RawAnswer, add: (kind: string, detail: string) => void): void {
    const events = sseData(answer.text);
    if (events.at(-1) !== "[DONE]") add("stream", "the stream does not end with data: [DONE]");
    const chunk = this.validator.schema("ChatCompletionChunk");
    const error = this.validator.schema("Error");
    for (const event of events.slice(0, -1)) {
      let value: unknown;
      try {
        value = JSON.parse(event);
      } catch {
        add("stream", `an event is not JSON: ${event.slice(0, 80)}`);
        continue;
      }
      if (!chunk(value) && !error(value))
        add("stream", `an event is neither a ChatCompletionChunk nor an Error: ${event.slice(0, 120)}`);
    }
  }

  private checkWrongMethod(
    fuzzCase: FuzzCase,
    template: string,
    answer: RawAnswer,
    add: (kind: string, detail: string) => void,
  ): void {
    const allowed = this.methodsOf(template);
    const allow = (answer.headers["allow"] ?? []).join(",").toUpperCase();
    const lists = allowed.every((method) => allow.includes(method));
    if (fuzzCase.key === undefined && answer.status === 401) return;
    if (answer.status === 405 && lists) return;
    if (fuzzCase.method.toUpperCase() === "OPTIONS" && answer.status < 300 && lists) return;
    add(
      "wrong-method",
      `${fuzzCase.method} on ${template} (documented: ${allowed.join(", ")}) answered ${answer.status}` +
        `${allow ? ` with Allow: ${allow}` : " without Allow"} (expected 405 with Allow)`,
    );
  }

  private checkIntent(
    fuzzCase: FuzzCase,
    answer: RawAnswer,
    json: unknown,
    add: (kind: string, detail: string) => void,
  ): void {
    const intent = fuzzCase.intent;
    const code = (json as { error?: { code?: string; param?: string | null } } | undefined)?.error?.code;
    const param = (json as { error?: { param?: string | null } } | undefined)?.error?.param;
    switch (intent.kind) {
      case "chat": {
        if (!intent.bytesIntact || fuzzCase.key === undefined) return;
        // The document's schema, and its bound on nesting for every JSON body (`info.x-max-json-depth`).
        const maxDepth = this.doc.info["x-max-json-depth"] ?? Infinity;
        const docValid = this.chatRequest(intent.jsonBody) && jsonDepth(intent.jsonBody) <= maxDepth;
        if (!docValid && fuzzCase.label.startsWith("chat/optional ← null")) {
          // Built from a valid body by nulling optional fields only: null must mean absent, in the document too.
          add(
            "null-optional",
            `the document refuses null for an optional field (${this.ajv.errorsText(this.chatRequest.errors)})`,
          );
          return;
        }
        if (!docValid) {
          if (answer.status < 400)
            add(
              "accepts-invalid",
              `answered ${answer.status} to a body the document refuses (${this.ajv.errorsText(this.chatRequest.errors)})`,
            );
          return;
        }
        const body = intent.jsonBody as Record<string, unknown> & { model: string; messages: { content: string }[] };
        // The README's two cross-field rules (api/README.md), which a JSON Schema does not express.
        const crossField =
          (body.stream_options != null && body.stream !== true) ||
          (body.max_tokens != null &&
            body.max_completion_tokens != null &&
            body.max_tokens !== body.max_completion_tokens);
        if (crossField) return;
        if (!this.listedModels.includes(body.model)) {
          if (code !== "model_not_found" && !(code === "invalid_request" && param === "model"))
            add(
              "model-exact",
              `model ${JSON.stringify(body.model.slice(0, 60))} is no listed id but answered ${answer.status} ${code ?? ""}`,
            );
          return;
        }
        const small = body.messages.reduce((sum, message) => sum + message.content.length, 0) < 4_000;
        const idempotent = fuzzCase.headers.some(([name]) => name.toLowerCase() === "idempotency-key");
        if (!small || (idempotent && answer.status === 409)) return;
        const expected = fuzzCase.key === "funded" ? 200 : 402;
        if (answer.status !== expected)
          add(
            "valid-refused",
            `a valid request with a listed model answered ${answer.status} ${code ?? ""} (expected ${expected})`,
          );
        return;
      }
      case "model-lookup": {
        if (fuzzCase.key === undefined) return;
        const listed = intent.id !== null && this.listedModels.includes(intent.id);
        // With a query the endpoint does not take (`?x[]=1`), a 400 naming it is right for a listed id too.
        if (
          listed &&
          answer.status !== 200 &&
          // (A HEAD answer has no body to name it.)
          !(intent.withQuery && answer.status === 400 && (code === "invalid_request" || fuzzCase.method === "HEAD"))
        )
          add("model-exact", `listed id answered ${answer.status}`);
        if (!listed && answer.status < 300)
          add(
            "model-exact",
            `GET /v1/models/{id} served ${JSON.stringify(intent.id)}, which is no listed id (ids match exactly)`,
          );
        return;
      }
      case "jobs-query": {
        if (fuzzCase.key === undefined) return;
        const offending = new Set<string>();
        // Parameters whose value the gateway may read either way (a literal space ends the request target, an
        // integer with leading zeros): the gateway may rightly name one of them when it refuses the query.
        const unclear = new Set<string>();
        let ambiguous = false;
        const counts = new Map<string, number>();
        for (const entry of intent.params) counts.set(entry.name, (counts.get(entry.name) ?? 0) + 1);
        for (const entry of intent.params) {
          const validate = this.queryParams.get(entry.name);
          if (!validate) continue;
          const verdict = plainValue(entry.raw, validate);
          if (entry.bracketed || (counts.get(entry.name) ?? 0) > 1 || verdict === "invalid") offending.add(entry.name);
          else if (verdict === "ambiguous" || entry.name === "before" || entry.name === "after") {
            ambiguous = true;
            unclear.add(entry.name);
          }
        }
        // A parameter the endpoint does not list is refused naming it (api/README.md, "Query parameters");
        // an empty name (`&&`, `=`) has nothing to name: any spec-format 4xx will do.
        if (intent.unlisted === "") ambiguous = true;
        else if (intent.unlisted !== undefined && offending.size === 0) {
          if (answer.status !== 400 || code !== "invalid_request")
            add(
              "query-form",
              `unlisted query parameter ${intent.unlisted} answered ${answer.status} ${code ?? ""} (expected 400 invalid_request)`,
            );
          return;
        }
        if (offending.size > 0) {
          // With an unlisted parameter as well, naming either one is right; so is naming a parameter whose value
          // the gateway may read as invalid (seed 80568930: `status=0x5&after=5␠` named `after`, read as `5`).
          const named =
            offending.has(String(param)) ||
            unclear.has(String(param)) ||
            (intent.unlisted !== undefined && intent.unlisted === (param ?? ""));
          if (answer.status !== 400 || code !== "invalid_request" || !named)
            add(
              "query-form",
              `query parameter(s) ${[...offending].join(", ")} not one plain value of the documented form, but answered ${answer.status} ${code ?? ""} param=${String(param)}`,
            );
        } else if (!ambiguous && answer.status !== 200) {
          add("query-form", `plain documented query answered ${answer.status} ${code ?? ""}`);
        }
        return;
      }
      case "own-job": {
        if (answer.status !== 200 || json === undefined) return;
        const job = json as {
          id: string;
          worker_address?: string | null;
          on_chain?: { escrow_tx: string; settlement_tx: string };
        };
        const header = (name: string) => answer.headers[name]?.[0];
        const expected: [string, string | null | undefined][] = [
          ["x-service-job-id", job.id],
          ["x-service-worker", job.worker_address],
          ["x-service-tx-hash", job.on_chain?.escrow_tx],
          ["x-service-settlement-tx", job.on_chain?.settlement_tx],
        ];
        for (const [name, value] of expected)
          if (value && header(name)?.toLowerCase() !== value.toLowerCase())
            add("job-headers", `GET /v1/jobs/{id} ${name} is ${header(name) ?? "absent"}, the job says ${value}`);
        return;
      }
      case "webhook-ip": {
        let special: string | undefined;
        try {
          const address = ipaddr.process(intent.host);
          // The well-known NAT64 prefix 64:ff9b::/96 is globally reachable (IANA IPv6 special-purpose registry,
          // RFC 6052): it reaches the IPv4 address in its last 32 bits, which decides.
          const reached =
            address.kind() === "ipv6" && address.match(ipaddr.IPv6.parseCIDR("64:ff9b::/96"))
              ? new ipaddr.IPv4(address.toByteArray().slice(12))
              : address;
          const range = reached.range();
          if (range !== "unicast") special = range;
        } catch {
          return;
        }
        if (special && fuzzCase.key !== undefined && (answer.status !== 400 || param !== "url"))
          add("ssrf", `webhook to ${intent.host} (${special}) answered ${answer.status} (expected 400 naming url)`);
        return;
      }
      case "webhook-control-url": {
        // Issue 23 item 9: the URL parser drops CR LF and tabs, so such a URL was stored and delivered elsewhere.
        if (fuzzCase.key !== undefined && answer.status === 201)
          add(
            "webhook-control-url",
            `a webhook URL with control characters was registered: ${JSON.stringify(intent.url)}`,
          );
        return;
      }
      case "webhook-create": {
        const maxDepth = this.doc.info["x-max-json-depth"] ?? Infinity;
        if (
          fuzzCase.key === undefined ||
          !this.webhookRequest(intent.jsonBody) ||
          jsonDepth(intent.jsonBody) > maxDepth
        )
          return;
        // A body the document accepts is registered, unless the wallet is at its cap: a 409 whose code the error
        // catalog gives 409 (the cap's code, `webhook_limit_reached` today, is the catalog's, not the fuzzer's).
        const conflict =
          answer.status === 409 &&
          code !== undefined &&
          errorCatalog[code as keyof typeof errorCatalog]?.status === 409;
        if (answer.status !== 201 && !conflict)
          add("webhook-refused", `a webhook body the document accepts answered ${answer.status} ${code ?? ""}`);
        return;
      }
      case "webhook-list": {
        if (answer.status === 200 && typeof (json as { has_more?: unknown }).has_more !== "boolean")
          add("webhook-pages", "GET /v1/webhooks is not paginated like GET /v1/jobs (no has_more)");
        return;
      }
      case "none":
        return;
    }
  }
}

/** A query value against its documented schema: `valid`, `invalid`, or `ambiguous` (an integer with leading zeros). */
function plainValue(raw: string, validate: ValidateFunction): "valid" | "invalid" | "ambiguous" {
  // A `{{job:N}}` placeholder is filled with one of the key's job ids when sent: a valid cursor.
  if (/^\{\{job:[a-z0-9-]+\}\}$/.test(raw)) return "valid";
  // A literal space or tab ends the request target in the HTTP request line, so Node's parser hands the gateway the
  // query cut there (`limit=5 ` arrives as `limit=5`): what the gateway sees is not this value.
  if (/[ \t]/.test(raw)) return "ambiguous";
  let value: string;
  try {
    value = decodeURIComponent(raw.replaceAll("+", " "));
  } catch {
    return "invalid";
  }
  const schema = validate.schema as JsonSchema;
  if (schema.type === "integer") {
    if (!/^\d+$/.test(value)) return "invalid";
    if (/^0\d/.test(value)) return "ambiguous";
    return validate(Number(value)) ? "valid" : "invalid";
  }
  return validate(value) ? "valid" : "invalid";
}

/**
 * Levels of nested arrays and objects in a JSON value (the top-level object is 1); iterative, for deep values.
 * Deliberately not api/http/jsonDepth.ts: the oracle judges the gateway, so it shares no code with what it checks
 * (and it walks a parsed value, where the gateway scans bytes before parsing).
 */
export function jsonDepth(value: unknown): number {
  let deepest = 0;
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length > 0) {
    const [item, depth] = stack.pop()!;
    if (item === null || typeof item !== "object") continue;
    deepest = Math.max(deepest, depth);
    for (const child of Object.values(item)) stack.push([child, depth + 1]);
  }
  return deepest;
}
