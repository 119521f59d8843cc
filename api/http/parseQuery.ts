import type { Request } from "express";
import { z } from "zod";
import { ApiError } from "../errors/ApiError.js";
import { parseOrThrow } from "./validate.js";

/**
 * The query of `req` checked against `schema` (a zod object of string-valued fields): every parameter is one plain
 * value of its documented form, or the request is `invalid_request` naming it. Read from the raw query string, not
 * Express's parsed `req.query`, so nothing is silently reshaped: a parameter the endpoint does not take (including
 * the array forms `status[]=` and `status[0]=`), a repeated parameter and a value of the wrong form are all refused.
 */
/** For endpoints without query parameters (spec: "No parameters"). */
export const NO_QUERY = z.object({});

/** An integer query parameter: decimal digits only (no sign, exponent, fraction, hex or spaces), within bounds. */
export function integerParam(name: string, min: number, max: number) {
  return z
    .string()
    .regex(/^[0-9]+$/, `${name} must be an integer written in decimal digits`)
    .transform(Number)
    .pipe(z.number().int().min(min, `${name} must be at least ${min}`).max(max, `${name} must be at most ${max}`));
}

/** Page sizes of every paginated list (spec, Limits: default 20, maximum 100). */
export const PAGE_SIZE = { default: 20, max: 100 } as const;

/** The `limit` of a paginated list: decimal digits, 1 to PAGE_SIZE.max, PAGE_SIZE.default when absent. */
export function pageLimitParam() {
  return integerParam("limit", 1, PAGE_SIZE.max).default(PAGE_SIZE.default);
}

/** Longer parameter names are shortened in error messages. */
const MAX_NAME_SHOWN = 100;

export function parseQuery<T extends z.ZodObject>(req: Request, schema: T): z.infer<T> {
  const known = new Set(Object.keys(schema.shape));
  const values: Record<string, string> = {};
  for (const [rawName, value] of new URLSearchParams(rawQueryOf(req))) {
    const name = rawName.length > MAX_NAME_SHOWN ? `${rawName.slice(0, MAX_NAME_SHOWN)}…` : rawName;
    if (!known.has(rawName)) throw unknownParameter(name, known);
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
