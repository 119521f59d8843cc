import { Router } from "express";
import { readCommittedOpenapi } from "./openapiFile.js";

/** `GET /v1/openapi.json`: the committed OpenAPI 3.1 document. No key needed (it describes a public API). */
export function openapiRouter(): Router {
  const router = Router();
  const body = readCommittedOpenapi();
  router.get("/v1/openapi.json", (_req, res) => {
    res.type("application/json").send(body);
  });
  return router;
}
