import { Router, type RequestHandler } from "express";
import type { OperationDoc } from "../openapi/operation.js";

/**
 * Who may call an endpoint, which also decides where the composition root mounts it: `open` endpoints before
 * anything checks a key, `apiKey` endpoints behind `authenticate` (every `/v1` path but the OpenAPI document),
 * `webApp` endpoints (`/app/*`) after them; a web-app endpoint that needs the signed-in wallet checks the session
 * itself (`api/app/sessionWallet.ts`).
 */
export type EndpointAccess = "open" | "apiKey" | "webApp";

/** One endpoint (a method on a path): what it answers and how its handler is built from its dependencies. */
export interface Endpoint<Deps> {
  method: "get" | "post" | "put" | "delete";
  /** Express path pattern, e.g. `/v1/jobs/:job_id`. */
  path: string;
  access: EndpointAccess;
  /** Mounted only when this holds (the dev-mode faucet, the RPC proxy without a public RPC URL). */
  enabledFor?: (deps: Deps) => boolean;
  /**
   * The endpoint's OpenAPI operation (request, response, headers, errors), declared here once; the document
   * (`npm run openapi`) is generated from every endpoint that has one. Only the public API (`/v1`) declares it.
   */
  openapi?: OperationDoc;
  /** Builds the handler once, at start-up. */
  handler: (deps: Deps) => RequestHandler;
}

/**
 * One router serving `endpoints` in list order (the order also orders the methods of a 405's `Allow` header, which
 * is read from the mounted routes).
 */
export function routerOf<Deps>(endpoints: readonly Endpoint<Deps>[], deps: Deps): Router {
  const router = Router();
  for (const endpoint of endpoints) {
    if (endpoint.enabledFor && !endpoint.enabledFor(deps)) continue;
    router[endpoint.method](endpoint.path, endpoint.handler(deps));
  }
  return router;
}
