import { Router } from "express";
import { NO_QUERY, parseQuery } from "../http/parseQuery.js";
import { readCommittedOpenapi } from "./openapiFile.js";

/** `GET /v1/openapi.json`: the committed OpenAPI 3.1 document. No key needed (it describes a public API). */
export function openapiRouter(): Router {
  const router = Router();
  const body = readCommittedOpenapi();
  router.get("/v1/openapi.json", (req, res) => {
    parseQuery(req, NO_QUERY);
    res.type("application/json").send(body);
  });
  return router;
}
