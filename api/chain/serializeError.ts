import { BaseError } from "viem";
import { stdSerializers } from "pino";
import { revertOf } from "./revertOf.js";

/**
 * Log form of an error. viem errors carry the whole contract ABI and call data; a log line needs the short
 * message, the node's details and the decoded custom error only.
 */
export function serializeError(error: unknown): unknown {
  if (error instanceof BaseError) {
    return { type: error.name, message: error.shortMessage, details: error.details, revert: revertOf(error)?.name };
  }
  return error instanceof Error ? stdSerializers.err(error) : error;
}
