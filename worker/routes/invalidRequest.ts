import type { z } from "zod";
import { WorkerError } from "../workerError.js";

/** A zod failure as the worker's `invalid_request`, naming each offending field. */
export function invalidRequest(error: z.ZodError): WorkerError {
  const issues = error.issues.map((issue) => ({ param: issue.path.map(String).join("."), message: issue.message }));
  const summary = issues.map((issue) => `${issue.param || "body"}: ${issue.message}`).join("; ");
  return new WorkerError("invalid_request", summary, { issues });
}
