import { NO_QUERY, parseQuery } from "../../http/parseQuery.js";
import { readCommittedOpenapi } from "../../openapi/openapiFile.js";
import type { Endpoint } from "../endpoint.js";

/** `GET /v1/openapi.json`: the committed OpenAPI 3.1 document. No key needed (it describes a public API). */
export const getOpenapi: Endpoint<unknown> = {
  method: "get",
  path: "/v1/openapi.json",
  access: "open",
  openapi: {
    operationId: "getOpenApiDocument",
    summary: "This document",
    tag: "Meta",
    response: { status: 200, description: "The OpenAPI 3.1 document.", body: { type: "object" } },
    errors: ["rate_limited"],
  },
  handler: () => {
    const body = readCommittedOpenapi();
    return (req, res) => {
      parseQuery(req, NO_QUERY);
      res.type("application/json").send(body);
    };
  },
};
