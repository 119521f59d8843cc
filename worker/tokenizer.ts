import { decode, encode, encodeChat } from "gpt-tokenizer/encoding/o200k_base";
import type { ChatMessage } from "./backends/types.js";

/**
 * The worker's token counter: o200k_base with the chat framing of gpt-4o. Every backend that cannot get a
 * count from its engine uses it, so prompt and completion counts are comparable across workers.
 */
export function countPromptTokens(messages: readonly ChatMessage[]): number {
  return encodeChat(messages, "gpt-4o").length;
}

export function encodeText(text: string): number[] {
  return encode(text);
}

export function decodeToken(token: number): string {
  return decode([token]);
}

export function countTextTokens(text: string): number {
  return encode(text).length;
}
