import { z } from "zod";

/** Query parameters shared by the list endpoints (read by `parseQuery`, api/http/parseQuery.ts). */

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
