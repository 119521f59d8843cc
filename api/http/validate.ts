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
  const message = issue
    ? param
      ? `Invalid value for '${param}': ${issue.message}`
      : issue.message
    : "Invalid request.";
  throw new ApiError("invalid_request", { message, param });
}
