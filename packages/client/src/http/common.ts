import { z } from "zod";
import { JOB_ID_PATTERN, ULID_PATTERN_SOURCE } from "../jobId.js";
import { TIERS } from "../tiers.js";
import { errorCatalog } from "./errorCatalog.js";

/**
 * Building blocks of the HTTP contract: the formats every endpoint shares. Server-free (zod and plain data only), so
 * the web app and the tests import the inferred types with `import type`, and `api/openapi/openapiDocument.ts`
 * turns the schemas into the OpenAPI document's components.
 */

/**
 * The OpenAPI document's components: each schema registered here under its `id` becomes
 * `#/components/schemas/<id>` and is referenced wherever another schema uses it. A registry of the module's own, not
 * zod's global one: a test runner that evaluates this module once per test file would register every id twice.
 */
export const components = z.registry<{ id: string }>();

/** `job_` + ULID. */
export const jobIdSchema = z.string().regex(JOB_ID_PATTERN, "must be a job id (job_<ULID>)");
/** `wh_` + ULID. */
export const webhookIdSchema = z
  .string()
  .regex(new RegExp(`^wh_${ULID_PATTERN_SOURCE}$`), "must be a webhook id (wh_<ULID>)");

export const txHashSchema = z
  .string()
  .regex(/^0x[0-9a-f]{64}$/)
  .meta({ description: "Transaction hash." });
export const addressSchema = z
  .string()
  .regex(/^0x[0-9a-fA-F]{40}$/)
  .meta({ description: "Chain address." });
/** Written by `Date.toISOString()`; documented as the JSON Schema `date-time` format. */
export const isoTimeSchema = z.string().meta({ format: "date-time", description: "ISO 8601 UTC timestamp." });
/** `sha256:` + 64 lowercase hex: the worker's output hash as the API shows it. */
export const proofHashSchema = z.string().regex(/^sha256:[0-9a-f]{64}$/, "must be sha256:<64 lowercase hex>");
export const tierSchema = z.enum(TIERS);

/** `{object: "list", data, has_more, next_cursor}`: every paginated list of the API. */
export function pageSchema<Item extends z.ZodType, Cursor extends z.ZodType>(item: Item, cursor: Cursor) {
  return z.object({
    object: z.literal("list"),
    data: z.array(item),
    has_more: z.boolean(),
    next_cursor: cursor.nullable(),
  });
}

export const usageSchema = z
  .object({
    prompt_tokens: z.number().int().min(0),
    completion_tokens: z.number().int().min(0),
    total_tokens: z.number().int().min(0),
  })
  .register(components, { id: "Usage" });
export type Usage = z.infer<typeof usageSchema>;

type ErrorCodeName = keyof typeof errorCatalog;
const errorCodes = Object.keys(errorCatalog) as [ErrorCodeName, ...ErrorCodeName[]];
const errorTypes = [...new Set(Object.values(errorCatalog).map((entry) => entry.type))] as [string, ...string[]];

/** The one error body of the API (spec, "Errors"); codes and types are the catalog's. */
export const errorBodySchema = z
  .strictObject({
    error: z.strictObject({
      code: z.enum(errorCodes).meta({ description: "Machine-readable code." }),
      message: z.string().min(1),
      type: z.enum(errorTypes).meta({ description: "Category of the error." }),
      param: z.string().nullable().meta({ description: "Offending request parameter." }),
      docs: z.string().meta({ format: "uri", description: "`{docs_url}/errors#<code>`." }),
      details: z
        .record(z.string(), z.unknown())
        .optional()
        .meta({ description: "Code-specific facts (see the error catalog in the README)." }),
    }),
  })
  .register(components, { id: "Error" });
export type ErrorBody = z.infer<typeof errorBodySchema>;
