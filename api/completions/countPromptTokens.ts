import { encodeChat } from "gpt-tokenizer/encoding/o200k_base";

export interface PromptMessage {
  role: "system" | "user" | "assistant";
  content: string;
}

/**
 * Prompt tokens as the workers count them (o200k_base with gpt-4o chat framing, worker/tokenizer.ts), so the
 * context check, the escrow estimate and the receipt's prompt count agree.
 */
export function countPromptTokens(messages: readonly PromptMessage[]): number {
  return encodeChat(messages, "gpt-4o").length;
}
