import { z } from "zod";
import { ApiError } from "../errors/ApiError.js";
import { parseOrThrow } from "../http/validate.js";
import { webhookId } from "./webhookSchemas.js";
import type { ListWebhooksQuery } from "./webhookStore.js";

const PAGE_SIZE = { default: 20, max: 100 } as const;

/** The query of `GET /v1/webhooks`: the pagination parameters of `GET /v1/jobs`, and a `status` filter. */
const listWebhooksQuerySchema = z.object({
  limit: z
    .string()
    .regex(/^[1-9][0-9]*$/, "must be an integer written in decimal digits")
    .transform(Number)
    .pipe(z.number().max(PAGE_SIZE.max, `must be at most ${PAGE_SIZE.max}`))
    .default(PAGE_SIZE.default),
  before: webhookId.optional(),
  after: webhookId.optional(),
  status: z.enum(["active", "failed"], { error: "must be active or failed" }).optional(),
});

const PARAMETERS = new Set(Object.keys(listWebhooksQuerySchema.shape));

/**
 * Each query parameter must be a documented one given once as a plain value: a repeated parameter (`limit=1&
 * limit=2`), a bracketed one (`status[]=failed`, which the query parser keeps as its own name) or an unknown name
 * is a 400 `invalid_request` naming it, never silently dropped; values are checked in their exact textual form
 * (`limit=0x5`, `limit=1e1` are refused).
 */
export function parseListWebhooksQuery(query: Record<string, unknown>): ListWebhooksQuery {
  for (const [name, value] of Object.entries(query)) {
    if (!PARAMETERS.has(name)) {
      throw new ApiError("invalid_request", {
        message: `Unknown query parameter '${name}'. Accepted: ${[...PARAMETERS].join(", ")}.`,
        param: name,
      });
    }
    if (typeof value !== "string") {
      throw new ApiError("invalid_request", {
        message: `Invalid value for '${name}': must be given once, as a plain value.`,
        param: name,
      });
    }
  }
  const parsed = parseOrThrow(listWebhooksQuerySchema, query);
  return {
    limit: parsed.limit,
    ...(parsed.before ? { before: parsed.before } : {}),
    ...(parsed.after ? { after: parsed.after } : {}),
    ...(parsed.status ? { status: parsed.status } : {}),
  };
}
