import type { Request } from "express";
import { z } from "zod";
import { ApiError } from "../errors/ApiError.js";
import { parseOrThrow } from "./validate.js";

/** For endpoints without query parameters (spec: "No parameters"). */
export const NO_QUERY = z.object({});

export { PAGE_SIZE, integerParam, pageLimitParam } from "@credit-metered/client/http";

/** Longer parameter names are shortened in error messages. */
const MAX_NAME_SHOWN = 100;

/**
 * The query of `req` checked against `schema` (a zod object of string-valued fields): every parameter is one plain
 * value of its documented form, or the request is `invalid_request` naming it. Read from the raw query string, not
 * Express's parsed `req.query`, so nothing is silently reshaped: a parameter the endpoint does not take (including
 * the array forms `status[]=` and `status[0]=`), a repeated parameter and a value of the wrong form are all refused.
 */
export function parseQuery<T extends z.ZodObject>(req: Request, schema: T): z.infer<T> {
  const raw = rawQueryOf(req);
  // Every completion checks that it has no query: without one there is nothing to parse (issue 26, hot path).
  if (raw === "" && schema === NO_QUERY) return {} as z.infer<T>;
  const known = new Set(Object.keys(schema.shape));
  const values: Record<string, string> = {};
  const malformed = raw.includes("%") ? namesWithMalformedValues(raw) : undefined;
  for (const [rawName, value] of new URLSearchParams(raw)) {
    const name = rawName.length > MAX_NAME_SHOWN ? `${rawName.slice(0, MAX_NAME_SHOWN)}…` : rawName;
    if (!known.has(rawName)) throw unknownParameter(name, known);
    if (malformed?.has(rawName)) {
      throw new ApiError("invalid_request", {
        param: name,
        message: `The query parameter '${name}' is not validly percent-encoded (each '%' must start a UTF-8 escape such as %20).`,
      });
    }
    if (name in values) {
      throw new ApiError("invalid_request", {
        param: name,
        message: `The query parameter '${name}' must be given once.`,
      });
    }
    values[name] = value;
  }
  return parseOrThrow(schema, values);
}

/**
 * URLSearchParams reads a malformed escape (`model=%ZZ`, `model=%C3%28`) literally, which would make `%ZZ` a value
 * the client never meant: a client that encodes its values properly cannot send it. So a value whose
 * percent-encoding does not decode is refused naming its parameter, like any other value outside its form (path
 * segments differ: `/v1/jobs/%ZZ` is an id that matches nothing, `middleware/literalPercent.ts`).
 */
function namesWithMalformedValues(raw: string): Set<string> {
  const names = new Set<string>();
  for (const pair of raw.split("&")) {
    const equals = pair.indexOf("=");
    if (equals === -1 || !pair.includes("%", equals) || decodes(pair.slice(equals + 1)) !== undefined) continue;
    const name = decodes(pair.slice(0, equals));
    if (name !== undefined) names.add(name);
  }
  return names;
}

/** `component` decoded as `application/x-www-form-urlencoded` does (`+` is a space), or undefined if it cannot be. */
function decodes(component: string): string | undefined {
  try {
    return decodeURIComponent(component.replaceAll("+", " "));
  } catch {
    return undefined;
  }
}

function unknownParameter(name: string, known: Set<string>): ApiError {
  const base = name.replace(/\[.*$/s, "");
  if (base !== name && known.has(base)) {
    return new ApiError("invalid_request", {
      param: base,
      message: `The query parameter '${base}' takes one plain value; the array form '${name}' is not accepted.`,
    });
  }
  const accepted = known.size > 0 ? ` It accepts: ${[...known].join(", ")}.` : " It takes no query parameters.";
  return new ApiError("invalid_request", {
    param: name,
    message: `Unknown query parameter '${name}' for this endpoint.${accepted}`,
  });
}

function rawQueryOf(req: Request): string {
  const url = req.originalUrl;
  const start = url.indexOf("?");
  return start === -1 ? "" : url.slice(start + 1);
}
