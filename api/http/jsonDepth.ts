import { ApiError } from "../errors/ApiError.js";

/**
 * The deepest nesting of arrays and objects a JSON body may have. Bodies of the API nest 4 levels at most (a chat
 * body's `messages.N.content`); 32 leaves room for clients' extra fields. A body nested thousands deep cost
 * `JSON.parse` ~100 ms of event loop (52 KB of `[`) before it was refused anyway.
 */
export const MAX_JSON_DEPTH = 32;

const OPEN_ARRAY = 0x5b;
const OPEN_OBJECT = 0x7b;
const CLOSE_ARRAY = 0x5d;
const CLOSE_OBJECT = 0x7d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * Refuses a body nested deeper than MAX_JSON_DEPTH with 400 `invalid_request`, before it is parsed: one pass over
 * the bytes (brackets inside strings do not count), stopping at the first level too deep. Malformed JSON is left
 * to the parser. Installed as body-parser's `verify`.
 *
 * A string's content is skipped with `indexOf` (native, memchr-fast) to its next quote, which ends the string unless
 * an odd run of backslashes escapes it: a 900 KB prompt costs a fraction of a millisecond instead of a byte-by-byte
 * loop's 2.5–5 ms on the event loop.
 */
export function assertJsonDepth(body: Buffer): void {
  let depth = 0;
  for (let index = 0; index < body.length; index++) {
    const byte = body[index]!;
    if (byte === QUOTE) {
      index = closingQuote(body, index + 1);
      if (index < 0) return;
    } else if (byte === OPEN_ARRAY || byte === OPEN_OBJECT) {
      if (++depth > MAX_JSON_DEPTH)
        throw new ApiError("invalid_request", {
          message: `The body nests arrays and objects deeper than ${MAX_JSON_DEPTH} levels.`,
          param: null,
        });
    } else if (byte === CLOSE_ARRAY || byte === CLOSE_OBJECT) depth--;
  }
}

/** Index of the quote closing the string whose content starts at `from`, or -1 when the body ends first. */
function closingQuote(body: Buffer, from: number): number {
  let quote = body.indexOf(QUOTE, from);
  while (quote >= 0) {
    let backslashes = 0;
    while (quote - backslashes - 1 >= from && body[quote - backslashes - 1] === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return quote;
    quote = body.indexOf(QUOTE, quote + 1);
  }
  return -1;
}
