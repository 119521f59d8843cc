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
 */
export function assertJsonDepth(body: Buffer): void {
  let depth = 0;
  let inString = false;
  for (let index = 0; index < body.length; index++) {
    const byte = body[index]!;
    if (inString) {
      if (byte === BACKSLASH) index++;
      else if (byte === QUOTE) inString = false;
    } else if (byte === QUOTE) inString = true;
    else if (byte === OPEN_ARRAY || byte === OPEN_OBJECT) {
      if (++depth > MAX_JSON_DEPTH)
        throw new ApiError("invalid_request", {
          message: `The body nests arrays and objects deeper than ${MAX_JSON_DEPTH} levels.`,
          param: null,
        });
    } else if (byte === CLOSE_ARRAY || byte === CLOSE_OBJECT) depth--;
  }
}
