/**
 * The most webhooks a wallet can have at once (deleted ones do not count, failed ones do): one event fans out to
 * at most this many POSTs, and the whole list fits in one page of `GET /v1/webhooks`. Beyond it, `POST
 * /v1/webhooks` answers 409 `webhook_limit_reached` (README: why 20).
 */
export const MAX_WEBHOOKS_PER_WALLET = 20;
