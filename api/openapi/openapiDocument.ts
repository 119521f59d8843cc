import { z } from "zod";
import {
  accountSchema,
  chatCompletionChunkSchema,
  chatCompletionRequestSchema,
  chatCompletionSchema,
  chatMessageSchema,
  completionUsageSchema,
  components,
  createWebhookBody,
  disputeRequestSchema,
  disputeResultSchema,
  errorBodySchema,
  eventNameSchema,
  jobListSchema,
  jobSchema,
  modelListSchema,
  modelSchema,
  responseCreateRequestSchema,
  responseInputMessageSchema,
  responseObjectSchema,
  responseOutputMessageSchema,
  responseStreamEventSchema,
  responseUsageSchema,
  usageSchema,
  webhookDeletedSchema,
  webhookListSchema,
  webhookSchema,
  errorCatalog,
  type ErrorCode,
} from "@credit-metered/client/http";
import { ENDPOINTS, type Endpoint } from "../endpoints/index.js";
import { MAX_JSON_DEPTH } from "../http/jsonDepth.js";
import { inline, tidy, type JsonSchema } from "./jsonSchema.js";
import { OPERATION_TAGS, RESPONSE_HEADERS, type OperationDoc } from "./operation.js";

/**
 * The OpenAPI 3.1 document of the `/v1` API, generated: the schemas from the HTTP contract
 * (@credit-metered/client/http, zod 4's `z.toJSONSchema`), the schemas the gateway validates requests with and types
 * its answers by; the operations (parameters, bodies, headers, error lists) from the `openapi` declaration each
 * endpoint carries (api/endpoints/, `Endpoint.openapi`), the error statuses from the error catalog. Only the
 * document-wide prose is written here. Committed as `api/openapi/openapi.json` by `npm run openapi`;
 * `npm run lint:openapi` fails when the two differ or the document does not lint. The gateway serves the committed
 * file at `GET /v1/openapi.json` (no key), the docs site renders it (docs-site/), and the e2e suite validates real
 * responses against it.
 */

type Schema = JsonSchema;

const ref = (name: string): Schema => ({ $ref: `#/components/schemas/${name}` });

/** The components, in the document's order: every schema of the contract that carries an `id`. */
const COMPONENTS: z.ZodType[] = [
  errorBodySchema,
  usageSchema,
  completionUsageSchema,
  chatMessageSchema,
  chatCompletionRequestSchema,
  chatCompletionSchema,
  chatCompletionChunkSchema,
  responseInputMessageSchema,
  responseCreateRequestSchema,
  responseUsageSchema,
  responseOutputMessageSchema,
  responseObjectSchema,
  responseStreamEventSchema,
  modelSchema,
  modelListSchema,
  jobSchema,
  jobListSchema,
  disputeRequestSchema,
  disputeResultSchema,
  accountSchema,
  eventNameSchema,
  createWebhookBody,
  webhookSchema,
  webhookListSchema,
  webhookDeletedSchema,
];

/** The components of the document, generated from the contract (request bodies as clients write them). */
function componentSchemas(): Record<string, Schema> {
  const generated = z.toJSONSchema(components, {
    io: "input",
    uri: (id) => `#/components/schemas/${id}`,
  }).schemas;
  const schemas: Record<string, Schema> = {};
  for (const schema of COMPONENTS) {
    const id = components.get(schema)?.id;
    if (!id || !generated[id]) throw new Error(`contract schema without a component id: ${String(id)}`);
    schemas[id] = tidy(generated[id]) as Schema;
  }
  const unlisted = Object.keys(generated).filter((id) => !(id in schemas));
  if (unlisted.length > 0) throw new Error(`contract components missing from COMPONENTS: ${unlisted.join(", ")}`);
  return schemas;
}

/**
 * What any request can be answered with before its operation runs: headers over the size limit, and a query
 * parameter the operation does not take (unknown, repeated, or in an array form such as `status[]`).
 */
const EVERY_REQUEST: ErrorCode[] = ["headers_too_large", "expectation_failed", "invalid_request"];

/** Error responses by status, each listing the codes this API answers with that status. */
function errorResponses(...codes: ErrorCode[]): Record<string, Schema> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of new Set([...codes, ...EVERY_REQUEST])) {
    const status = errorCatalog[code].status;
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  const responses: Record<string, Schema> = {};
  for (const [status, list] of [...byStatus].sort(([a], [b]) => a - b)) {
    responses[String(status)] = {
      description: `Error: ${list.map((code) => `\`${code}\``).join(", ")}.`,
      content: { "application/json": { schema: ref("Error") } },
    };
  }
  return responses;
}

// Auth itself answers 503 when neither the chain nor the index can confirm a key (docs/DESIGN.md, degraded mode).
const AUTH: ErrorCode[] = [
  "missing_api_key",
  "invalid_api_key",
  "key_suspended",
  "rate_limited",
  "internal_error",
  "service_unavailable",
];

/** A contract schema as a `$ref` to its component, or a plain JSON Schema as it is. */
function schemaOf(schema: z.ZodType | Schema): Schema {
  if (!(schema instanceof z.ZodType)) return schema;
  const id = components.get(schema)?.id;
  if (!id) throw new Error("an operation's body schema must be a contract component (carry an `id`)");
  return ref(id);
}

/** The query parameters of a list endpoint, from its query schema (`parseQuery` reads them as strings). */
function queryParameters(query: z.ZodObject): Schema[] {
  return Object.entries(query.shape).map(([name, field]) => {
    const { description, ...schema } = inline(field as z.ZodType);
    return { name, in: "query", ...(description ? { description } : {}), schema };
  });
}

/** `/v1/jobs/:job_id` → `/v1/jobs/{job_id}` and its path parameters. */
function pathOf(expressPath: string): { path: string; names: string[] } {
  const names = [...expressPath.matchAll(/:([A-Za-z_]+)/g)].map((match) => match[1]!);
  return { path: expressPath.replace(/:([A-Za-z_]+)/g, "{$1}"), names };
}

/** One operation object from an endpoint's declaration. */
function operationOf(endpoint: Endpoint<never>, doc: OperationDoc, pathNames: string[]): Schema {
  const parameters = [
    ...pathNames.map((name) => ({ name, in: "path", required: true, schema: { type: "string" } })),
    ...(doc.requestHeaders ?? []).map((header) => ({ ...header, in: "header", required: false })),
    ...(doc.query ? queryParameters(doc.query) : []),
  ].map(({ name, in: where, required, description, schema }: Schema) => ({
    name,
    in: where,
    ...(required === undefined ? {} : { required }),
    ...(description === undefined ? {} : { description }),
    schema,
  }));
  const { response } = doc;
  const headers = response.headers
    ? Object.fromEntries(response.headers.map((name) => [name, RESPONSE_HEADERS[name]]))
    : undefined;
  const success: Schema = {
    description: response.description,
    ...(headers ? { headers } : {}),
    content: {
      "application/json": { schema: schemaOf(response.body) },
      ...(response.eventStream
        ? { "text/event-stream": { schema: { type: "string", description: response.eventStream } } }
        : {}),
    },
  };
  const open = endpoint.access === "open";
  return {
    operationId: doc.operationId,
    summary: doc.summary,
    ...(doc.description ? { description: doc.description } : {}),
    tags: [doc.tag],
    ...(open ? { security: [] } : {}),
    ...(parameters.length > 0 ? { parameters } : {}),
    ...(doc.requestBody
      ? { requestBody: { required: true, content: { "application/json": { schema: schemaOf(doc.requestBody) } } } }
      : {}),
    responses: {
      [String(response.status)]: success,
      ...errorResponses(...(open ? [] : AUTH), ...doc.errors),
    },
  };
}

/** Every code an endpoint can answer with, as the document lists it (its own, auth's, any request's). */
export function errorCodesOf(endpoint: Endpoint<never>): ErrorCode[] {
  const own = endpoint.openapi?.errors ?? [];
  return [...new Set([...(endpoint.access === "open" ? [] : AUTH), ...own, ...EVERY_REQUEST])];
}

/** The paths, grouped by tag in the document's tag order, then in the gateway's mounting order. */
function pathsOf(endpoints: readonly Endpoint<never>[]): Record<string, Record<string, Schema>> {
  const declared = endpoints.filter((endpoint) => endpoint.openapi);
  const tags = Object.keys(OPERATION_TAGS);
  const ordered = [...declared].sort((a, b) => tags.indexOf(a.openapi!.tag) - tags.indexOf(b.openapi!.tag));
  const paths: Record<string, Record<string, Schema>> = {};
  for (const endpoint of ordered) {
    const { path, names } = pathOf(endpoint.path);
    const operations = (paths[path] ??= {});
    if (operations[endpoint.method]) throw new Error(`two declarations of ${endpoint.method} ${path}`);
    operations[endpoint.method] = operationOf(endpoint, endpoint.openapi!, names);
  }
  return paths;
}

export function openapiDocument(): Schema {
  return {
    openapi: "3.1.0",
    info: {
      title: "Credit-metered inference API",
      version: "2025-01-01",
      summary: "OpenAI-compatible chat completions paid in credits locked and settled on chain.",
      description:
        "Every request locks credits in the escrow contract before routing and settles the worker's signed " +
        "receipt on chain after the last token. Errors share one body (`Error`); every code is listed with the " +
        "status it comes with. On every path: a method the path does not serve is 405 `method_not_allowed` with " +
        "an `Allow` header; an unknown path under `/v<n>/` is 404 `route_not_found`; a query parameter the " +
        "operation does not list, a repeated one or an array form (`status[]=`) is 400 `invalid_request` naming " +
        "it; `null` in an optional body field is the same as leaving it out; a JSON body nested deeper than " +
        `${MAX_JSON_DEPTH} arrays/objects (\`x-max-json-depth\`) is 400 \`invalid_request\`.`,
      "x-max-json-depth": MAX_JSON_DEPTH,
    },
    servers: [{ url: "http://127.0.0.1:8080", description: "Local stack (`npm start`)" }],
    security: [{ bearer: [] }],
    tags: Object.entries(OPERATION_TAGS).map(([name, description]) => ({ name, description })),
    paths: pathsOf(ENDPOINTS as readonly Endpoint<never>[]),
    components: {
      securitySchemes: {
        bearer: {
          type: "http",
          scheme: "bearer",
          description: "`Authorization: Bearer svc_live_<32 alphanumeric>`.",
        },
      },
      schemas: componentSchemas(),
    },
  };
}
