import type { LlamaModel, Token } from "node-llama-cpp";

/**
 * Splits a streamed chunk (`text` decoded from `tokens`) into one text piece per token whose concatenation is
 * exactly `text`. node-llama-cpp releases several tokens at once when it held some back (a possible stop
 * sequence, an incomplete UTF-8 character); the worker protocol wants one `token` line per token, because the
 * gateway refuses a receipt claiming more tokens than lines it relayed.
 *
 * A token that ends inside a multi-byte character gets an empty piece; the character goes to the token that
 * completes it.
 */
export function splitTokenPieces(model: LlamaModel, tokens: readonly Token[], text: string): string[] {
  if (tokens.length <= 1) return [text];
  const pieces: string[] = [];
  let emitted = "";
  for (let end = 1; end < tokens.length; end++) {
    const prefix = model.detokenize(tokens.slice(0, end));
    if (prefix.length > emitted.length && !prefix.endsWith("\uFFFD") && text.startsWith(prefix)) {
      pieces.push(prefix.slice(emitted.length));
      emitted = prefix;
    } else {
      pieces.push("");
    }
  }
  pieces.push(text.slice(emitted.length));
  return pieces;
}
