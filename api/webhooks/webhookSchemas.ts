/** The request schemas of the webhook routes live in the HTTP contract (api/contract/webhooks.ts). */
export { webhookIdSchema as webhookId } from "../contract/common.js";
export { createWebhookBody, listDeliveriesQuery, listWebhooksQuery, webhookIdParam } from "../contract/webhooks.js";
