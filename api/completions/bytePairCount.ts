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
 * O(n log n). The counting is resumable: `countTextTokens` returns when the caller's `outOfTime()` says so (checked
 * every 1,024 merge steps and before every piece), so the caller can yield to the event loop between slices.
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
 * Memo of "rank of token a followed by token b" (or NO_RANK), so the long runs an attacker sends (the same few
 * pairs over and over) cost one integer hash probe per lookup instead of a substring and a string-map lookup.
 * Open addressing in typed arrays (3 MB); emptied when three quarters full.
 */
class PairMemo {
  private static readonly CAPACITY = 1 << 18;
  private readonly left = new Int32Array(PairMemo.CAPACITY).fill(-1);
  private readonly right = new Int32Array(PairMemo.CAPACITY);
  private readonly value = new Int32Array(PairMemo.CAPACITY);
  private size = 0;

  constructor(
    private readonly bytesOfRank: readonly string[],
    private readonly table: Map<string, number>,
  ) {}

  get(a: number, b: number): number {
    const mask = PairMemo.CAPACITY - 1;
    let slot = (Math.imul(a, 0x9e3779b1) ^ Math.imul(b, 0x85ebca77)) & mask;
    for (;;) {
      const stored = this.left[slot]!;
      if (stored === -1) break;
      if (stored === a && this.right[slot] === b) return this.value[slot]!;
      slot = (slot + 1) & mask;
    }
    const rank = this.table.get(this.bytesOfRank[a]! + this.bytesOfRank[b]!) ?? NO_RANK;
    if (this.size >= (PairMemo.CAPACITY * 3) / 4) {
      this.left.fill(-1);
      this.size = 0;
      return rank;
    }
    this.left[slot] = a;
    this.right[slot] = b;
    this.value[slot] = rank;
    this.size++;
    return rank;
  }
}

let pairMemo: PairMemo | undefined;

function pairs(table: Map<string, number>): PairMemo {
  if (pairMemo) return pairMemo;
  const bytesOfRank: string[] = [];
  for (const [bytes, rank] of table) bytesOfRank[rank] = bytes;
  pairMemo = new PairMemo(bytesOfRank, table);
  return pairMemo;
}

const BOM_BYTES = "\xef\xbb\xbf";

/**
 * The byte-pair merge of one pre-tokenized piece (its UTF-8 bytes as a latin1 string), resumable: `run` works
 * until the piece is done or `outOfTime()` says the slice is over (checked every 1,024 steps). Allocation is the
 * only work done up front; linking the parts happens in the resumable first phase.
 */
class PieceMerge {
  private readonly n: number;
  /** Parts are [i, next[i]); `pairRank[i]` is 1 + the rank of part i joined with the part after it, 0 if none. */
  private readonly next: Int32Array;
  private readonly prev: Int32Array;
  private readonly pairRank: Int32Array;
  /**
   * The token of each part, so a pair is looked up by two ranks. Not used for a piece containing a byte-order
   * mark, where gpt-tokenizer's lookup depends on the bytes themselves (see `rankOf`).
   */
  private readonly token: Int32Array | undefined;
  private readonly memo: PairMemo;
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
    this.pairRank = new Int32Array(n);
    this.token = bytes.includes(BOM_BYTES) ? undefined : new Int32Array(n);
    this.memo = pairs(table);
    // Every merge pushes at most two entries.
    this.heap = new Float64Array(3 * n);
  }

  /** Returns true when the piece is fully merged (`parts` is then its token count). */
  run(outOfTime: () => boolean): boolean {
    const { n, pairRank, next, prev, token } = this;
    let steps = 0;
    while (this.initialized < n - 1) {
      const i = this.initialized++;
      if (i === 0) {
        next[0] = 1;
        prev[0] = -1;
        if (token) token[0] = this.table.get(this.bytes[0]!)!;
      }
      next[i + 1] = i + 2;
      prev[i + 1] = i;
      if (token) token[i + 1] = this.table.get(this.bytes[i + 1]!)!;
      const rank = this.rankOfPair(i);
      pairRank[i] = rank + 1;
      if (rank !== NO_RANK) this.push(rank, i);
      if ((++steps & CHECK_EVERY) === 0 && outOfTime()) return false;
    }
    this.initialized = n;
    while (this.heapSize > 0) {
      const key = this.pop();
      const rank = Math.floor(key / OFFSET_SPAN);
      const start = key - rank * OFFSET_SPAN;
      // Stale entry: the part was merged away or its pair changed since.
      if (pairRank[start] !== rank + 1) continue;
      const removed = next[start]!;
      const after = removed + 1 >= n ? n : next[removed]!;
      next[start] = after;
      if (after < n) prev[after] = start;
      pairRank[removed] = 0;
      if (token) token[start] = rank;
      this.parts--;
      const own = this.rankOfPair(start);
      pairRank[start] = own + 1;
      if (own !== NO_RANK) this.push(own, start);
      const before = prev[start]!;
      if (before >= 0) {
        const previous = this.rankOfPair(before);
        pairRank[before] = previous + 1;
        if (previous !== NO_RANK) this.push(previous, before);
      }
      if ((++steps & CHECK_EVERY) === 0 && outOfTime()) return this.heapSize === 0;
    }
    return true;
  }

  private rankOfPair(start: number): number {
    const second = this.next[start]!;
    if (second >= this.n) return NO_RANK;
    if (this.token) return this.memo.get(this.token[start]!, this.token[second]!);
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
  while (!state.done && state.tokens < stopAt) {
    if (state.merging) {
      if (!state.merging.run(outOfTime)) return;
      state.tokens += state.merging.parts;
      state.merging = undefined;
      continue;
    }
    // Checked before every piece: a long piece's pre-tokenizer match and set-up are not sliced.
    if (outOfTime()) return;
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
  pairs(ranks());
}
