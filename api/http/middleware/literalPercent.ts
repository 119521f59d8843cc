import type { RequestHandler } from "express";

/**
 * Path segments whose percent-encoding is malformed (`%ZZ`, `%C3%28`) are taken literally: their `%` is escaped
 * before routing, so `/v1/jobs/%ZZ` reaches its route with the id `%ZZ` and answers like any other unknown id
 * (`job_not_found`, `model_not_found`, `webhook_not_found`), instead of the router's decoding error. The query
 * string is left alone: `parseQuery` refuses a malformed escape in a value, naming its parameter.
 */
export const literalPercent: RequestHandler = (req, _res, next) => {
  const queryStart = req.url.indexOf("?");
  const path = queryStart === -1 ? req.url : req.url.slice(0, queryStart);
  if (!path.includes("%")) {
    next();
    return;
  }
  const segments = path.split("/");
  let changed = false;
  for (const [index, segment] of segments.entries()) {
    if (!segment.includes("%") || decodes(segment)) continue;
    segments[index] = segment.replaceAll("%", "%25");
    changed = true;
  }
  if (changed) req.url = segments.join("/") + (queryStart === -1 ? "" : req.url.slice(queryStart));
  next();
};

function decodes(segment: string): boolean {
  try {
    decodeURIComponent(segment);
    return true;
  } catch {
    return false;
  }
}
