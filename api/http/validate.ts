import type { z } from "zod";
import { ApiError } from "../errors/ApiError.js";

/**
 * Parses `input` with `schema`; on failure throws `invalid_request` naming the first offending field
 * (dotted path, e.g. `messages.0.role`), as the spec's `param`.
 */
export function parseOrThrow<T extends z.ZodType>(schema: T, input: unknown): z.infer<T> {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const param = issue && issue.path.length > 0 ? issue.path.join(".") : null;
  const reason = issue ? (nonFiniteNumberAt(input, issue.path) ? "must be a finite number" : issue.message) : "";
  const message = issue ? (param ? `Invalid value for '${param}': ${reason}` : reason) : "Invalid request.";
  throw new ApiError("invalid_request", { message, param });
}

/**
 * Whether the value at `path` is a number JSON.parse could not represent (`1e309` parses to Infinity): zod's own
 * message for it, "expected number, received number", explains nothing.
 */
function nonFiniteNumberAt(input: unknown, path: readonly PropertyKey[]): boolean {
  let value: unknown = input;
  for (const key of path) {
    if (typeof value !== "object" || value === null) return false;
    value = (value as Record<PropertyKey, unknown>)[key];
  }
  return typeof value === "number" && !Number.isFinite(value);
}
