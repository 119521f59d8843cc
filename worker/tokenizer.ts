import { decode, encode } from "gpt-tokenizer/encoding/o200k_base";
import { countTokensOf } from "../shared/tokens/bytePairCount.js";
import { countChatTokens, ReservedTokenTextError } from "../shared/tokens/countChatTokens.js";
import type { ChatMessage } from "./backends/types.js";
import { WorkerError } from "./workerError.js";

/**
 * The worker's token counter: o200k_base with the chat framing of gpt-4o, counted by the product's shared counter
 * (`shared/tokens/`, the gateway's too), so the receipt's prompt tokens are what the gateway estimated, identical
 * to gpt-tokenizer's `encodeChat(messages, "gpt-4o")`, and a long run without spaces neither takes quadratic time
 * nor holds the event loop (the count yields between slices of a few ms). Every backend that cannot get a count
 * from its engine uses it, so prompt and completion counts are comparable across workers.
 *
 * @throws WorkerError `invalid_request` naming the message when a message holds reserved special-token text
 * (`<|endoftext|>` …): o200k_base has no plain-text reading of it, and the gateway refuses it before routing.
 */
export async function countPromptTokens(messages: readonly ChatMessage[]): Promise<number> {
  try {
    return (await countChatTokens(messages)).tokens;
  } catch (error) {
    if (!(error instanceof ReservedTokenTextError)) throw error;
    throw new WorkerError("invalid_request", error.message, { param: `messages.${error.messageIndex}.content` });
  }
}

/** Token ids of `text` (the simulated backend's ASCII output only: it streams one id per token line). */
export function encodeText(text: string): number[] {
  return encode(text);
}

export function decodeToken(token: number): string {
  return decode([token]);
}

export function countTextTokens(text: string): number {
  return countTokensOf(text);
}
