import type { RequestHandler } from "express";
import { ApiError } from "../../errors/ApiError.js";

/**
 * RFC 9112 §3.2: an HTTP/1.1 request without a `Host` header, or with more than one, is answered 400. Node's own
 * check (`requireHostHeader`) answers with an empty body and lets a duplicate through (it keeps the first), so
 * the server turns it off (api/main.ts) and this check answers in the spec's error format instead.
 */
export const hostHeader: RequestHandler = (req, _res, next) => {
  let count = 0;
  for (let i = 0; i < req.rawHeaders.length; i += 2) if (req.rawHeaders[i]?.toLowerCase() === "host") count++;
  if (count > 1) {
    next(new ApiError("invalid_request", { message: "The request has more than one Host header.", param: null }));
    return;
  }
  if (count === 0 && (req.httpVersionMajor > 1 || (req.httpVersionMajor === 1 && req.httpVersionMinor >= 1))) {
    next(new ApiError("invalid_request", { message: "An HTTP/1.1 request must have a Host header.", param: null }));
    return;
  }
  next();
};
