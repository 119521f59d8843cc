import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";
import { readCommittedOpenapi } from "./openapiFile.js";

// ajv-formats is CommonJS: under NodeNext its default export arrives wrapped once more.
type AddFormats = (ajv: Ajv2020) => unknown;
const addFormats: AddFormats =
  (addFormatsModule as unknown as { default?: AddFormats }).default ?? (addFormatsModule as unknown as AddFormats);

type Json = Record<string, unknown>;

const DOC_ID = "openapi.json";

/** `#/components/schemas/X` → `openapi.json#/$defs/X`, so Ajv resolves every reference inside one schema. */
function rewriteRefs(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(rewriteRefs);
  if (value === null || typeof value !== "object") return value;
  const out: Json = {};
  for (const [key, inner] of Object.entries(value)) {
    out[key] =
      key === "$ref" && typeof inner === "string" && inner.startsWith("#/components/schemas/")
        ? `${DOC_ID}#/$defs/${inner.slice("#/components/schemas/".length)}`
        : rewriteRefs(inner);
  }
  return out;
}

export interface CheckedResponse {
  method: string;
  /** The path template as the document names it, e.g. `/v1/jobs/{job_id}`. */
  path: string;
  status: number;
  contentType: string | undefined;
  body: unknown;
}

/**
 * Validates real responses against the committed OpenAPI document: the status must be documented for the
 * operation, and the body must match the schema of its media type. Returns the problems (empty when valid).
 */
export class ResponseValidator {
  private readonly doc: Json;
  private readonly ajv = new Ajv2020({ allErrors: true, strict: false });
  private readonly compiled = new Map<string, ValidateFunction>();
  /** `METHOD path status` of every response validated (coverage reports). */
  readonly seen = new Set<string>();

  constructor(documentText = readCommittedOpenapi()) {
    this.doc = JSON.parse(documentText) as Json;
    addFormats(this.ajv);
    const components = this.doc.components as { schemas: Json };
    this.ajv.addSchema({ $id: DOC_ID, $defs: rewriteRefs(components.schemas) });
  }

  /** Every `METHOD path status` the document declares. */
  declared(): string[] {
    const result: string[] = [];
    for (const [path, item] of Object.entries(this.doc.paths as Record<string, Json>)) {
      for (const [method, operation] of Object.entries(item)) {
        for (const status of Object.keys((operation as { responses: Json }).responses))
          result.push(`${method.toUpperCase()} ${path} ${status}`);
      }
    }
    return result;
  }

  /** A named component schema's validator (e.g. `ChatCompletionChunk` for each SSE event). */
  schema(name: string): ValidateFunction {
    const key = `component:${name}`;
    let validate = this.compiled.get(key);
    if (!validate) {
      validate = this.ajv.compile({ $ref: `${DOC_ID}#/$defs/${name}` });
      this.compiled.set(key, validate);
    }
    return validate;
  }

  check(response: CheckedResponse): string[] {
    const method = response.method.toLowerCase();
    const operation = (this.doc.paths as Record<string, Record<string, Json> | undefined>)[response.path]?.[method];
    if (!operation) return [`${response.method} ${response.path} is not in the document`];
    const responses = operation.responses as Record<string, Json>;
    const documented = responses[String(response.status)];
    if (!documented)
      return [`${response.method} ${response.path} answered ${response.status}, which is not documented`];
    this.seen.add(`${response.method.toUpperCase()} ${response.path} ${response.status}`);
    const content = documented.content as Record<string, { schema: Json }> | undefined;
    if (!content) return [];
    const mediaType = (response.contentType ?? "").split(";")[0]!.trim();
    const media = content[mediaType];
    if (!media) return [`content type ${mediaType || "(none)"} is not documented for ${response.status}`];
    const key = `${method} ${response.path} ${response.status} ${mediaType}`;
    let validate = this.compiled.get(key);
    if (!validate) {
      validate = this.ajv.compile(rewriteRefs(media.schema) as Json);
      this.compiled.set(key, validate);
    }
    if (validate(response.body)) return [];
    return (validate.errors ?? []).map((error) => `${error.instancePath || "/"} ${error.message ?? "invalid"}`);
  }
}
