import type { RequestHandler } from "express";
import { rateLimit } from "express-rate-limit";
import { ApiError } from "../errors/ApiError.js";

/** The per-IP burst limit (spec, Limits): 429 `rate_limited` with Retry-After, in the spec's error format. */
export function burstLimit(options: { limit: number; windowMs: number }): RequestHandler {
  return rateLimit({
    windowMs: options.windowMs,
    limit: options.limit,
    standardHeaders: "draft-7",
    legacyHeaders: false,
    handler: (req, _res, next) => {
      const resetTime = (req as { rateLimit?: { resetTime?: Date } }).rateLimit?.resetTime;
      const seconds = resetTime
        ? Math.max(1, Math.ceil((resetTime.getTime() - Date.now()) / 1000))
        : Math.ceil(options.windowMs / 1000);
      next(new ApiError("rate_limited", { headers: { "retry-after": String(seconds) } }));
    },
  });
}
