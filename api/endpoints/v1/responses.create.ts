import { responseCreateRequestSchema, responseObjectSchema } from "@credit-metered/client/http";
import type { GatewayDeps } from "../../deps.js";
import { COMPLETION_ERRORS, IDEMPOTENCY_KEY_HEADER, JOB_HEADERS } from "../../openapi/operation.js";
import { responsesProtocol } from "../../responses/responsesProtocol.js";
import type { Endpoint } from "../endpoint.js";
import { completionHandler } from "./chatCompletions.create.js";

/**
 * POST /v1/responses: OpenAI's Responses API, stateless and text only. The same job as a chat completion — the
 * same handler, escrow, pricing, relay, lifecycle, headers, job resource, webhooks and dispute — with the body
 * translated into the job and the job's tokens written as Responses events (api/responses/).
 */
export const createResponse: Endpoint<GatewayDeps> = {
  method: "post",
  path: "/v1/responses",
  access: "apiKey",
  openapi: {
    operationId: "createResponse",
    summary:
      "Create a response (OpenAI Responses API, stateless and text only; the same escrowed job as a chat completion)",
    tag: "Completions",
    requestHeaders: [IDEMPOTENCY_KEY_HEADER],
    requestBody: responseCreateRequestSchema,
    response: {
      status: 200,
      description:
        "The response, `usage` carrying the charge; with `stream: true` a server-sent event stream of " +
        "`event: <type>` / `data: <ResponseStreamEvent>` events ending with `response.completed` (no `[DONE]`).",
      body: responseObjectSchema,
      headers: [...JOB_HEADERS, "x-request-id"],
      eventStream: "`event: <type>` and `data: <ResponseStreamEvent JSON>` pairs (see the schema).",
    },
    errors: COMPLETION_ERRORS,
  },
  handler: (deps) => completionHandler(deps, responsesProtocol(deps.config.MAX_MESSAGES, deps.config.DOCS_URL)),
};
