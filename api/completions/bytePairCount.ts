import bpeRanks from "gpt-tokenizer/bpeRanks/o200k_base";
import { CL_AND_O_TOKEN_SPLIT_PATTERN } from "gpt-tokenizer/encodingParams/constants";

/**
 * Exact o200k_base token counts in O(n log n), for any text.
 *
 * gpt-tokenizer (what the workers count with) merges the byte pairs of each pre-tokenized piece by scanning the
 * whole piece for the lowest-ranked pair at every step: quadratic in the piece, and a piece is a whole run of
 * letters or symbols without spaces (120 KB of emoji took 16 s). This is the same greedy merge — lowest rank first,
 * leftmost on ties, a piece that is itself a token counts as one — driven by a binary heap over a linked list of
 * parts, so the counts are identical (`bytePairCount.test.ts` compares them with gpt-tokenizer) and the cost is
 * O(n log n). The counting is resumable: `countTextTokens` returns after roughly `sliceBudget` units of work so a
 * caller can yield to the event loop between slices.
 */

/** Token ranks keyed by the token's bytes as a latin1 string (one char per byte), built once. */
let rankOfBytes: Map<string, number> | undefined;

/**
 * Mirrors gpt-tokenizer's lookup exactly: byte strings that are valid UTF-8 are looked up among the text tokens
 * only (a byte-array token that happens to be valid UTF-8 is unreachable there), the rest among the byte tokens.
 */
function ranks(): Map<string, number> {
  if (rankOfBytes) return rankOfBytes;
  const map = new Map<string, number>();
  bpeRanks.forEach((value, rank) => {
    if (typeof value === "string") {
      const bytes = Buffer.from(value, "utf8");
      if (bytes.toString("utf8") === value) map.set(bytes.toString("latin1"), rank);
      return;
    }
    const key = Buffer.from(value).toString("latin1");
    if (!isValidUtf8(key)) map.set(key, rank);
  });
  rankOfBytes = map;
  return map;
}

const BOM = "\xef\xbb\xbf";

/**
 * gpt-tokenizer decodes a valid UTF-8 pair with a `TextDecoder` that drops a leading byte-order mark before the
 * lookup, so a pair starting with one is looked up without it. Reproduced so the counts stay identical.
 */
function rankOf(table: Map<string, number>, key: string): number | undefined {
  if (key.startsWith(BOM) && isValidUtf8(key)) return table.get(key.slice(BOM.length));
  return table.get(key);
}

/** gpt-tokenizer's UTF-8 validity rule (no overlong forms, no surrogates, nothing above U+10FFFF). */
function isValidUtf8(bytes: string): boolean {
  let i = 0;
  while (i < bytes.length) {
    const first = bytes.charCodeAt(i);
    let length: number;
    let codePoint: number;
    if (first <= 0x7f) {
      i++;
      continue;
    } else if ((first & 0xe0) === 0xc0) {
      if (first <= 0xc1) return false;
      length = 2;
      codePoint = first & 0x1f;
    } else if ((first & 0xf0) === 0xe0) {
      length = 3;
      codePoint = first & 0x0f;
    } else if ((first & 0xf8) === 0xf0) {
      if (first > 0xf4) return false;
      length = 4;
      codePoint = first & 0x07;
    } else {
      return false;
    }
    if (i + length > bytes.length) return false;
    for (let j = 1; j < length; j++) {
      const byte = bytes.charCodeAt(i + j);
      if ((byte & 0xc0) !== 0x80) return false;
      codePoint = (codePoint << 6) | (byte & 0x3f);
    }
    if ((length === 3 && codePoint < 0x800) || (length === 4 && codePoint < 0x10000)) return false;
    if (codePoint >= 0xd800 && codePoint <= 0xdfff) return false;
    if (codePoint > 0x10ffff) return false;
    i += length;
  }
  return true;
}

/** Rank values are below 2^18 and byte offsets below 2^32, so one double orders heap entries by (rank, offset). */
const OFFSET_SPAN = 2 ** 32;
const NO_RANK = -1;
const LONE_SURROGATE = /\p{Cs}/u;
/** Steps between two looks at the clock (a power of two minus one, used as a mask). */
const CHECK_EVERY = 0x3ff;

/**
 * The byte-pair merge of one pre-tokenized piece (its UTF-8 bytes as a latin1 string), resumable: `run` works
 * until the piece is done or `outOfTime()` says the slice is over (checked every few hundred steps).
 */
class PieceMerge {
  private readonly n: number;
  /** Parts are [i, next[i]); `pairRank[i]` is the rank of part i joined with the part after it, or NO_RANK. */
  private readonly next: Int32Array;
  private readonly prev: Int32Array;
  private readonly pairRank: Int32Array;
  private readonly heap: Float64Array;
  private heapSize = 0;
  /** Next byte whose initial pair rank is still to be looked up (phase 1), then n. */
  private initialized = 0;
  parts: number;

  constructor(
    private readonly bytes: string,
    private readonly table: Map<string, number>,
  ) {
    const n = bytes.length;
    this.n = n;
    this.parts = n;
    this.next = new Int32Array(n);
    this.prev = new Int32Array(n);
    this.pairRank = new Int32Array(n).fill(NO_RANK);
    // Every merge pushes at most two entries.
    this.heap = new Float64Array(3 * n);
    for (let i = 0; i < n; i++) {
      this.next[i] = i + 1;
      this.prev[i] = i - 1;
    }
  }

  /** Returns true when the piece is fully merged (`parts` is then its token count). */
  run(outOfTime: () => boolean): boolean {
    const { n, pairRank } = this;
    let steps = 0;
    while (this.initialized < n - 1) {
      const i = this.initialized++;
      const rank = this.rankOfPair(i);
      pairRank[i] = rank;
      if (rank !== NO_RANK) this.push(rank, i);
      if ((++steps & CHECK_EVERY) === 0 && outOfTime()) return false;
    }
    this.initialized = n;
    while (this.heapSize > 0) {
      const key = this.pop();
      const rank = Math.floor(key / OFFSET_SPAN);
      const start = key - rank * OFFSET_SPAN;
      // Stale entry: the part was merged away or its pair changed since.
      if (pairRank[start] !== rank) continue;
      const removed = this.next[start]!;
      const after = removed + 1 >= n ? n : this.next[removed]!;
      this.next[start] = after;
      if (after < n) this.prev[after] = start;
      pairRank[removed] = NO_RANK;
      this.parts--;
      const own = this.rankOfPair(start);
      pairRank[start] = own;
      if (own !== NO_RANK) this.push(own, start);
      const before = this.prev[start]!;
      if (before >= 0) {
        const previous = this.rankOfPair(before);
        pairRank[before] = previous;
        if (previous !== NO_RANK) this.push(previous, before);
      }
      if ((++steps & CHECK_EVERY) === 0 && outOfTime()) return this.heapSize === 0;
    }
    return true;
  }

  private rankOfPair(start: number): number {
    const second = this.next[start]!;
    if (second >= this.n) return NO_RANK;
    const end = second + 1 >= this.n ? this.n : this.next[second]!;
    return rankOf(this.table, this.bytes.substring(start, end)) ?? NO_RANK;
  }

  private push(rank: number, offset: number): void {
    const heap = this.heap;
    let index = this.heapSize++;
    const key = rank * OFFSET_SPAN + offset;
    while (index > 0) {
      const parent = (index - 1) >> 1;
      if (heap[parent]! <= key) break;
      heap[index] = heap[parent]!;
      index = parent;
    }
    heap[index] = key;
  }

  private pop(): number {
    const heap = this.heap;
    const top = heap[0]!;
    const last = heap[--this.heapSize]!;
    let index = 0;
    for (;;) {
      const left = 2 * index + 1;
      if (left >= this.heapSize) break;
      const right = left + 1;
      const child = right < this.heapSize && heap[right]! < heap[left]! ? right : left;
      if (heap[child]! >= last) break;
      heap[index] = heap[child]!;
      index = child;
    }
    heap[index] = last;
    return top;
  }
}

/** The reserved strings gpt-tokenizer refuses inside message text (its `disallowedSpecial: "all"` default). */
export const SPECIAL_TOKEN_TEXTS = [
  "<|endoftext|>",
  "<|fim_prefix|>",
  "<|fim_middle|>",
  "<|fim_suffix|>",
  "<|im_start|>",
  "<|im_end|>",
  "<|im_sep|>",
  "<|endofprompt|>",
] as const;

/** The first reserved special-token text inside `text`, if any. */
export function specialTokenIn(text: string): string | undefined {
  if (!text.includes("<|")) return undefined;
  return SPECIAL_TOKEN_TEXTS.find((special) => text.includes(special));
}

/** Progress of one text's count; pass it back to continue where the last slice stopped. */
export interface TextCount {
  readonly text: string;
  tokens: number;
  done: boolean;
  /** The pre-tokenizer, whose `lastIndex` is the position in `text`. */
  readonly regex: RegExp;
  /** A long piece whose merge a slice left unfinished. */
  merging: PieceMerge | undefined;
}

export function startTextCount(text: string): TextCount {
  return {
    text,
    tokens: 0,
    done: text.length === 0,
    regex: new RegExp(CL_AND_O_TOKEN_SPLIT_PATTERN),
    merging: undefined,
  };
}

/**
 * Counts `state.text` until it is done, `outOfTime()` ends the slice, or `state.tokens` reaches `stopAt` (the
 * caller only needs to know the count passed a limit). Special tokens must have been refused before.
 */
export function countTextTokens(state: TextCount, outOfTime: () => boolean, stopAt = Number.POSITIVE_INFINITY): void {
  const table = ranks();
  let pieces = 0;
  while (!state.done && state.tokens < stopAt) {
    if (state.merging) {
      if (!state.merging.run(outOfTime)) return;
      state.tokens += state.merging.parts;
      state.merging = undefined;
      continue;
    }
    if ((++pieces & CHECK_EVERY) === 0 && outOfTime()) return;
    const match = state.regex.exec(state.text);
    if (!match) {
      state.done = true;
      break;
    }
    const piece = match[0];
    if (piece.length === 0) {
      state.regex.lastIndex++;
      continue;
    }
    const bytes = Buffer.from(piece, "utf8").toString("latin1");
    // gpt-tokenizer first looks the piece up as text: a piece that is a token is one token.
    if (bytes.length <= 1 || (!LONE_SURROGATE.test(piece) && table.has(bytes))) {
      state.tokens += 1;
      continue;
    }
    state.merging = new PieceMerge(bytes, table);
  }
}

/** Exact token count of `text` in one go (short texts, tests). */
export function countTokensOf(text: string): number {
  const state = startTextCount(text);
  countTextTokens(state, () => false);
  return state.tokens;
}

/** Builds the rank table now (start-up), instead of on the first request. */
export function warmTokenizer(): void {
  ranks();
}
