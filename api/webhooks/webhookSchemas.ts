/** The request schemas of the webhook routes live in the HTTP contract (packages/client/src/http/webhooks.ts). */
export {
  webhookIdSchema as webhookId,
  createWebhookBody,
  listDeliveriesQuery,
  listWebhooksQuery,
  webhookIdParam,
} from "@credit-metered/client/http";
