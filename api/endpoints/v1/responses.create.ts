import type { GatewayDeps } from "../../deps.js";
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
  handler: (deps) => completionHandler(deps, responsesProtocol(deps.config.MAX_MESSAGES, deps.config.DOCS_URL)),
};
