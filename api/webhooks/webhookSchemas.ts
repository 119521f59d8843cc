import { z } from "zod";
import { pageLimitParam } from "../http/parseQuery.js";
import { EVENT_NAMES } from "./eventNames.js";

/** Body of POST /v1/webhooks. Unknown fields are ignored; `secret` is optional (generated when absent or null). */
export const createWebhookBody = z.object({
  url: z.string({ error: "is required and must be a string" }).min(1, "is required"),
  events: z
    .array(z.enum(EVENT_NAMES, { error: `must be one of ${EVENT_NAMES.join(", ")}` }), {
      error: "is required and must be an array of event names",
    })
    .min(1, "must name at least one event")
    .transform((events) => [...new Set(events)]),
  secret: z
    .string({ error: "must be a string" })
    .min(16, "must be at least 16 characters")
    .max(256, "must be at most 256 characters")
    .regex(/^[\x21-\x7e]+$/, "must be printable ASCII without spaces")
    // `null` is the same as leaving it out (generated), as for every optional field of the API (issue 11 item 5).
    .nullish(),
});

/** `wh_` + ULID. */
export const webhookId = z.string().regex(/^wh_[0-7][0-9A-HJKMNP-TV-Z]{25}$/, "must be a webhook id (wh_<ULID>)");

export const webhookIdParam = z.object({ webhook_id: webhookId });

/**
 * The query of `GET /v1/webhooks`, read by the API's one query rule (`parseQuery`): the pagination parameters of
 * `GET /v1/jobs`, and a `status` filter.
 */
export const listWebhooksQuery = z.object({
  limit: pageLimitParam(),
  before: webhookId.optional(),
  after: webhookId.optional(),
  status: z.enum(["active", "failed"], { error: "status must be active or failed" }).optional(),
});

/** The query of the web app's `GET /app/webhooks/deliveries`. */
export const listDeliveriesQuery = z.object({
  webhook_id: webhookId.optional(),
  limit: pageLimitParam(),
});
