import { z } from "zod";
import { EVENT_NAMES } from "./eventNames.js";
import { components, isoTimeSchema, pageSchema, webhookIdSchema } from "./common.js";
import { pageLimitParam } from "./query.js";

/** The `/v1/webhooks` endpoints: registration, the Webhook resource, its list and deletion. */

export const eventNameSchema = z
  .enum(EVENT_NAMES, { error: `must be one of ${EVENT_NAMES.join(", ")}` })
  .register(components, { id: "EventName" });

/** Body of POST /v1/webhooks. Unknown fields are ignored; `secret` is optional (generated when absent or null). */
export const createWebhookBody = z
  .object({
    url: z
      .string({ error: "is required and must be a string" })
      .min(1, "is required")
      // The gateway checks the URL itself (https, a public host: api/webhooks/targetPolicy.ts).
      .meta({ format: "uri", description: "HTTPS endpoint." }),
    events: z
      .array(eventNameSchema, { error: "is required and must be an array of event names" })
      .min(1, "must name at least one event")
      .transform((events) => [...new Set(events)]),
    secret: z
      .string({ error: "must be a string" })
      .min(16, "must be at least 16 characters")
      .max(256, "must be at most 256 characters")
      .regex(/^[\x21-\x7e]+$/, "must be printable ASCII without spaces")
      // `null` is the same as leaving it out (generated), as for every optional field of the API (issue 11 item 5).
      .nullish()
      .meta({
        description:
          "Signing secret; generated (`whsec_` + base64 of 24 random bytes, shown once in the answer) when absent " +
          "or null. Keys both `Service-Signature` and the Standard Webhooks `webhook-signature` (README).",
      }),
  })
  .register(components, { id: "WebhookCreateRequest" });

export const webhookIdParam = z.object({ webhook_id: webhookIdSchema });

export const WEBHOOK_STATUSES = ["active", "failed"] as const;
export type WebhookStatus = (typeof WEBHOOK_STATUSES)[number];
const webhookStatusSchema = z.enum(WEBHOOK_STATUSES, { error: "status must be active or failed" });

/**
 * The query of `GET /v1/webhooks`, read by the API's one query rule (`parseQuery`): the pagination parameters of
 * `GET /v1/jobs`, and a `status` filter.
 */
export const listWebhooksQuery = z.object({
  limit: pageLimitParam(),
  before: webhookIdSchema.optional().meta({ description: "Webhooks created before this webhook id." }),
  after: webhookIdSchema.optional().meta({ description: "Webhooks created after this webhook id." }),
  status: webhookStatusSchema.optional(),
});

/** The query of the web app's `GET /app/webhooks/deliveries`. */
export const listDeliveriesQuery = z.object({
  webhook_id: webhookIdSchema.optional(),
  limit: pageLimitParam(),
});

/** A webhook as the API shows it (never with its secret, but in the creation answer when generated). */
export const webhookSchema = z
  .object({
    id: webhookIdSchema,
    object: z.literal("webhook"),
    url: z.string(),
    events: z.array(eventNameSchema),
    created_at: isoTimeSchema,
    status: webhookStatusSchema,
    secret: z
      .string()
      .optional()
      .meta({ description: "Only in the creation answer, and only when the service generated it." }),
  })
  .register(components, { id: "Webhook" });
export type Webhook = z.infer<typeof webhookSchema>;
/** A webhook as stored answers show it: without the secret. */
export type WebhookView = Omit<Webhook, "secret">;

export const webhookListSchema = pageSchema(webhookSchema, webhookIdSchema).register(components, { id: "WebhookList" });
export type WebhookList = z.infer<typeof webhookListSchema>;

export const webhookDeletedSchema = z
  .object({ id: z.string(), object: z.literal("webhook"), deleted: z.literal(true) })
  .register(components, { id: "WebhookDeleted" });
export type WebhookDeleted = z.infer<typeof webhookDeletedSchema>;
