import { createHash, timingSafeEqual } from "node:crypto";
import type { NextFunction, Request, Response } from "express";
import { WorkerError } from "./workerError.js";

function digest(value: string): Buffer {
  return createHash("sha256").update(value, "utf8").digest();
}

/**
 * Only the gateway holding `WORKER_GATEWAY_TOKEN` may submit or cancel jobs. Both sides are hashed first so the
 * comparison is constant-time and does not leak the token's length.
 */
export function gatewayAuth(token: string) {
  const expected = digest(`Bearer ${token}`);
  return (req: Request, _res: Response, next: NextFunction): void => {
    const presented = req.headers.authorization;
    if (presented === undefined || !timingSafeEqual(digest(presented), expected)) {
      throw new WorkerError("unauthorized", "a valid gateway bearer token is required");
    }
    next();
  };
}
