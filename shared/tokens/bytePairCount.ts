import { createRequire } from "node:module";
import { CL_AND_O_TOKEN_SPLIT_PATTERN } from "gpt-tokenizer/encodingParams/constants";

/**
 * Exact o200k_base token counts in O(n log n), for any text.
 *
 * gpt-tokenizer (the reference: the o200k_base tokenizer the workers counted with before) merges the byte pairs of each pre-tokenized piece by scanning the
 * whole piece for the lowest-ranked pair at every step: quadratic in the piece, and a piece is a whole run of
 * letters or symbols without spaces (120 KB of emoji took 16 s). This is the same greedy merge — lowest rank first,
 * leftmost on ties, a piece that is itself a token counts as one — driven by a binary heap over a linked list of
 * parts, so the counts are identical (`bytePairCount.test.ts` compares them with gpt-tokenizer) and the cost is
 * O(n log n). The counting is resumable: `countTextTokens` returns when the caller's `outOfTime()` says so (checked
 * every 1,024 merge steps and before every piece), so the caller can yield to the event loop between slices.
 */

const NO_RANK = -1;

/**
 * The o200k_base ranks as flat typed arrays (about 7 MB, and nothing for the garbage collector to walk: a
 * `Map` of 200k strings made every full collection of the gateway slower): the token bytes concatenated in one
 * blob, and an open-addressing hash table over them keyed by FNV-1a of the bytes.
 *
 * Mirrors gpt-tokenizer's lookup exactly: byte strings that are valid UTF-8 are looked up among the text tokens
 * only (a byte-array token that happens to be valid UTF-8 is unreachable there), the rest among the byte tokens.
 */
class RankTable {
  private readonly blob: Uint8Array;
  /** Blob range of a rank's bytes (`-1` start: the rank is not reachable by a lookup). */
  private readonly startOfRank: Int32Array;
  private readonly lengthOfRank: Int32Array;
  /** 1 + the rank stored in each slot, 0 when empty. */
  private readonly slots: Int32Array;
  private readonly mask: number;
  /**
   * For each byte value, the most times it occurs in one token (a byte-order mark in front of a token, which
   * gpt-tokenizer's lookup accepts, adds one each of 0xEF 0xBB 0xBF); and the longest token. See `lowerBound`.
   */
  private readonly mostPerToken = new Int32Array(256);
  private longest = 1;

  constructor(tokens: readonly (string | number[])[]) {
    const entries: { rank: number; bytes: Uint8Array }[] = [];
    let total = 0;
    tokens.forEach((value, rank) => {
      let bytes: Uint8Array;
      if (typeof value === "string") {
        bytes = Buffer.from(value, "utf8");
        if (Buffer.from(bytes).toString("utf8") !== value) return;
      } else {
        bytes = Uint8Array.from(value);
        if (isValidUtf8(bytes, 0, bytes.length)) return;
      }
      entries.push({ rank, bytes });
      total += bytes.length;
    });
    this.blob = new Uint8Array(total);
    this.startOfRank = new Int32Array(tokens.length).fill(-1);
    this.lengthOfRank = new Int32Array(tokens.length);
    let capacity = 1;
    while (capacity < entries.length * 2) capacity *= 2;
    this.slots = new Int32Array(capacity);
    this.mask = capacity - 1;
    const counts = new Int32Array(256);
    for (const { bytes } of entries) {
      counts.fill(0);
      for (const byte of bytes) counts[byte]!++;
      for (let byte = 0; byte < 256; byte++) {
        if (counts[byte]! > this.mostPerToken[byte]!) this.mostPerToken[byte] = counts[byte]!;
      }
      this.longest = Math.max(this.longest, bytes.length + 3);
    }
    for (const byte of [0xef, 0xbb, 0xbf]) this.mostPerToken[byte]!++;
    let offset = 0;
    for (const { rank, bytes } of entries) {
      this.blob.set(bytes, offset);
      this.startOfRank[rank] = offset;
      this.lengthOfRank[rank] = bytes.length;
      offset += bytes.length;
      let slot = hashBytes(bytes, 0, bytes.length, FNV_OFFSET) & this.mask;
      while (this.slots[slot] !== 0) slot = (slot + 1) & this.mask;
      this.slots[slot] = rank + 1;
    }
  }

  /**
   * A lower bound on the tokens of a piece, in one pass over its bytes: every token holds at most
   * `mostPerToken[b]` bytes of value `b` (one emoji's 0xF0 lead byte per token, at most 7 of CJK's 0xE5 …) and at
   * most `longest` bytes. Lets a count stop at the context window without merging a long piece that cannot fit.
   */
  lowerBound(bytes: Uint8Array): number {
    const counts = new Int32Array(256);
    for (let i = 0; i < bytes.length; i++) counts[bytes[i]!]!++;
    let bound = Math.ceil(bytes.length / this.longest);
    for (let byte = 0; byte < 256; byte++) {
      const most = this.mostPerToken[byte]!;
      if (counts[byte]! > 0 && most > 0) bound = Math.max(bound, Math.ceil(counts[byte]! / most));
    }
    return bound;
  }

  /** The rank of `bytes[from, to)` as a token, or NO_RANK (no byte-order-mark rule: see `lookup`). */
  get(bytes: Uint8Array, from: number, to: number): number {
    let slot = hashBytes(bytes, from, to, FNV_OFFSET) & this.mask;
    for (;;) {
      const stored = this.slots[slot]!;
      if (stored === 0) return NO_RANK;
      const rank = stored - 1;
      if (this.lengthOfRank[rank] === to - from && this.sameBytes(rank, bytes, from)) return rank;
      slot = (slot + 1) & this.mask;
    }
  }

  /** The rank of token `a`'s bytes followed by token `b`'s, or NO_RANK. */
  getPair(a: number, b: number): number {
    const blob = this.blob;
    const startA = this.startOfRank[a]!;
    const lengthA = this.lengthOfRank[a]!;
    const startB = this.startOfRank[b]!;
    const lengthB = this.lengthOfRank[b]!;
    const hash = hashBytes(blob, startB, startB + lengthB, hashBytes(blob, startA, startA + lengthA, FNV_OFFSET));
    let slot = hash & this.mask;
    for (;;) {
      const stored = this.slots[slot]!;
      if (stored === 0) return NO_RANK;
      const rank = stored - 1;
      if (
        this.lengthOfRank[rank] === lengthA + lengthB &&
        this.sameBytes(rank, blob, startA, lengthA) &&
        this.sameBytes(rank, blob, startB, lengthB, lengthA)
      ) {
        return rank;
      }
      slot = (slot + 1) & this.mask;
    }
  }

  /** Whether `source[from, from + length)` equals rank's bytes from `skip` on (length defaults to the rest). */
  private sameBytes(rank: number, source: Uint8Array, from: number, length?: number, skip = 0): boolean {
    const start = this.startOfRank[rank]! + skip;
    const count = length ?? this.lengthOfRank[rank]! - skip;
    for (let i = 0; i < count; i++) if (this.blob[start + i] !== source[from + i]) return false;
    return true;
  }
}

const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;

function hashBytes(bytes: Uint8Array, from: number, to: number, seed: number): number {
  let hash = seed;
  for (let i = from; i < to; i++) hash = Math.imul(hash ^ bytes[i]!, FNV_PRIME);
  return hash >>> 0;
}

let rankTable: RankTable | undefined;

function ranks(): RankTable {
  rankTable ??= new RankTable(loadRanks());
  return rankTable;
}

/**
 * gpt-tokenizer's o200k_base ranks, loaded for building the table once and then let go. An ES module is never
 * unloaded: imported, its 4 MB source, its 2 MB source map (cached once source maps are on, as tsx turns them on)
 * and its 200k strings stayed in the gateway's and every worker's heap for their whole life, beside the table built
 * from them (issue 26: RSS at 200 streams). Required as CommonJS and dropped from the require cache, all of it can be
 * collected once the table is built.
 */
function loadRanks(): readonly (string | number[])[] {
  const require = createRequire(import.meta.url);
  const id = require.resolve("gpt-tokenizer/cjs/bpeRanks/o200k_base");
  try {
    return (require(id) as { default: readonly (string | number[])[] }).default;
  } finally {
    delete require.cache[id];
  }
}

/**
 * gpt-tokenizer decodes a valid UTF-8 pair with a `TextDecoder` that drops a leading byte-order mark before the
 * lookup, so a pair starting with one is looked up without it. Reproduced so the counts stay identical.
 */
function lookup(table: RankTable, bytes: Uint8Array, from: number, to: number): number {
  if (to - from >= 3 && bytes[from] === 0xef && bytes[from + 1] === 0xbb && bytes[from + 2] === 0xbf) {
    if (isValidUtf8(bytes, from, to)) return table.get(bytes, from + 3, to);
  }
  return table.get(bytes, from, to);
}

/** gpt-tokenizer's UTF-8 validity rule (no overlong forms, no surrogates, nothing above U+10FFFF). */
function isValidUtf8(bytes: Uint8Array, from: number, to: number): boolean {
  let i = from;
  while (i < to) {
    const first = bytes[i]!;
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
    if (i + length > to) return false;
    for (let j = 1; j < length; j++) {
      const byte = bytes[i + j]!;
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

function containsByteOrderMark(bytes: Uint8Array): boolean {
  for (let i = bytes.indexOf(0xef); i !== -1 && i + 2 < bytes.length; i = bytes.indexOf(0xef, i + 1)) {
    if (bytes[i + 1] === 0xbb && bytes[i + 2] === 0xbf) return true;
  }
  return false;
}

/** Rank values are below 2^18 and byte offsets below 2^32, so one double orders heap entries by (rank, offset). */
const OFFSET_SPAN = 2 ** 32;
const LONE_SURROGATE = /\p{Cs}/u;
/** Steps between two looks at the clock (a power of two minus one, used as a mask). */
const CHECK_EVERY = 0x3ff;

/**
 * Memo of "rank of token a followed by token b" (or NO_RANK): the long runs an attacker sends repeat the same few
 * pairs, and a memo hit is one probe of two integers. Open addressing in typed arrays (3 MB); emptied when three
 * quarters full.
 */
class PairMemo {
  private static readonly CAPACITY = 1 << 18;
  private readonly left = new Int32Array(PairMemo.CAPACITY).fill(-1);
  private readonly right = new Int32Array(PairMemo.CAPACITY);
  private readonly value = new Int32Array(PairMemo.CAPACITY);
  private size = 0;

  constructor(private readonly table: RankTable) {}

  get(a: number, b: number): number {
    const mask = PairMemo.CAPACITY - 1;
    let slot = (Math.imul(a, 0x9e3779b1) ^ Math.imul(b, 0x85ebca77)) & mask;
    for (;;) {
      const stored = this.left[slot]!;
      if (stored === -1) break;
      if (stored === a && this.right[slot] === b) return this.value[slot]!;
      slot = (slot + 1) & mask;
    }
    const rank = this.table.getPair(a, b);
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

function pairs(table: RankTable): PairMemo {
  pairMemo ??= new PairMemo(table);
  return pairMemo;
}

/** The working arrays of one merge (about 32 bytes per byte of the piece). */
interface Scratch {
  capacity: number;
  next: Int32Array;
  prev: Int32Array;
  pairRank: Int32Array;
  token: Int32Array;
  heap: Float64Array;
}

/** Pieces at least this long merge in pooled scratch arrays. */
const POOLED_SCRATCH_BYTES = 64 * 1024;
/** Pooled scratch is dropped after this long without a long merge. */
const SCRATCH_IDLE_MS = 30_000;

/**
 * Scratch arrays for long merges, reused: allocating tens of MB of typed arrays for every long prompt made V8
 * collect the whole heap again and again (atomic pauses of 100+ ms on a loaded machine). Every array a merge
 * reads is written by it first, so a reused one needs no clearing. Dropped when idle.
 */
const scratchPool: Scratch[] = [];
let scratchRelease: NodeJS.Timeout | undefined;

function takeScratch(n: number): Scratch {
  if (n < POOLED_SCRATCH_BYTES) return newScratch(n);
  const index = scratchPool.findIndex((scratch) => scratch.capacity >= n);
  if (index !== -1) return scratchPool.splice(index, 1)[0]!;
  scratchPool.pop();
  return newScratch(n);
}

function giveBackScratch(scratch: Scratch): void {
  if (scratch.capacity < POOLED_SCRATCH_BYTES) return;
  scratchPool.push(scratch);
  clearTimeout(scratchRelease);
  scratchRelease = setTimeout(() => scratchPool.splice(0), SCRATCH_IDLE_MS);
  scratchRelease.unref();
}

function newScratch(n: number): Scratch {
  return {
    capacity: n,
    next: new Int32Array(n),
    prev: new Int32Array(n),
    pairRank: new Int32Array(n),
    token: new Int32Array(n),
    heap: new Float64Array(2 * n),
  };
}

/**
 * The byte-pair merge of one pre-tokenized piece (its UTF-8 bytes), resumable: `run` works until the piece is done
 * or `outOfTime()` says the slice is over (checked every 1,024 steps). Allocation is the only work done up front;
 * linking the parts happens in the resumable first phase.
 */
class PieceMerge {
  private readonly n: number;
  /** Parts are [i, next[i]); `pairRank[i]` is 1 + the rank of part i joined with the part after it, 0 if none. */
  private readonly next: Int32Array;
  private readonly prev: Int32Array;
  private readonly pairRank: Int32Array;
  /**
   * The token of each part, so a pair is looked up by two ranks. Not used for a piece containing a byte-order
   * mark, where gpt-tokenizer's lookup depends on the bytes themselves (see `lookup`).
   */
  private readonly token: Int32Array | undefined;
  private readonly memo: PairMemo;
  /** Each merge pops one entry and pushes at most two, and there are fewer merges than bytes. */
  private readonly heap: Float64Array;
  private readonly scratch: Scratch;
  private heapSize = 0;
  /** Next byte whose initial pair rank is still to be looked up (phase 1), then n. */
  private initialized = 0;
  parts: number;

  constructor(
    private readonly bytes: Uint8Array,
    private readonly table: RankTable,
  ) {
    const n = bytes.length;
    this.n = n;
    this.parts = n;
    this.scratch = takeScratch(n);
    this.next = this.scratch.next;
    this.prev = this.scratch.prev;
    this.pairRank = this.scratch.pairRank;
    this.token = containsByteOrderMark(bytes) ? undefined : this.scratch.token;
    this.memo = pairs(table);
    this.heap = this.scratch.heap;
  }

  /** Gives the scratch arrays back once the piece is merged. */
  private finish(): true {
    giveBackScratch(this.scratch);
    return true;
  }

  /** Returns true when the piece is fully merged (`parts` is then its token count). */
  run(outOfTime: () => boolean): boolean {
    const { n, pairRank, next, prev, token, bytes } = this;
    let steps = 0;
    while (this.initialized < n - 1) {
      const i = this.initialized++;
      if (i === 0) {
        next[0] = 1;
        prev[0] = -1;
        if (token) token[0] = this.table.get(bytes, 0, 1);
      }
      next[i + 1] = i + 2;
      prev[i + 1] = i;
      if (token) token[i + 1] = this.table.get(bytes, i + 1, i + 2);
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
      // Stale entry: the part was merged away or its pair changed since (still a step: runs of them are long).
      if (pairRank[start] !== rank + 1) {
        if ((++steps & CHECK_EVERY) === 0 && outOfTime()) return this.heapSize === 0 && this.finish();
        continue;
      }
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
      if ((++steps & CHECK_EVERY) === 0 && outOfTime()) return this.heapSize === 0 && this.finish();
    }
    return this.finish();
  }

  private rankOfPair(start: number): number {
    const second = this.next[start]!;
    if (second >= this.n) return NO_RANK;
    if (this.token) return this.memo.get(this.token[start]!, this.token[second]!);
    const end = second + 1 >= this.n ? this.n : this.next[second]!;
    return lookup(this.table, this.bytes, start, end);
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
  /** Whether the text after a long piece has been bounded already (once per text: the pass is over all of it). */
  restBounded: boolean;
}

export function startTextCount(text: string): TextCount {
  return {
    text,
    tokens: 0,
    done: text.length === 0,
    regex: new RegExp(CL_AND_O_TOKEN_SPLIT_PATTERN),
    merging: undefined,
    restBounded: false,
  };
}

/**
 * Counts `state.text` until it is done, `outOfTime()` ends the slice, or `state.tokens` reaches `stopAt` (the
 * caller only needs to know the count passed a limit; `state.tokens` is then a lower bound of the count, at least
 * `stopAt`). Special tokens must have been refused before.
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
    const bytes = Buffer.from(piece, "utf8");
    // gpt-tokenizer first looks the piece up as text: a piece that is a token is one token.
    if (bytes.length <= 1 || (!LONE_SURROGATE.test(piece) && table.get(bytes, 0, bytes.length) !== NO_RANK)) {
      state.tokens += 1;
      continue;
    }
    // Only worth a pass for long pieces: when even a lower bound reaches the limit, the merge is not needed.
    if (bytes.length >= BOUND_FIRST_BYTES && Number.isFinite(stopAt)) {
      let bound = table.lowerBound(bytes);
      // A long piece that fits alone may still not fit with what follows it (a 1 MB body of two long runs): tokens
      // never span pieces, so the bound of the rest taken whole adds to the piece's. One pass over the rest, once.
      if (!state.restBounded && state.tokens + bound < stopAt) {
        state.restBounded = true;
        bound += table.lowerBound(Buffer.from(state.text.slice(state.regex.lastIndex), "utf8"));
      }
      if (state.tokens + bound >= stopAt) {
        state.tokens += bound;
        return;
      }
    }
    state.merging = new PieceMerge(bytes, table);
  }
}

/** Pieces at least this long get the cheap lower bound before their merge. */
const BOUND_FIRST_BYTES = 4096;

/** Exact token count of `text` in one go (short texts, tests). */
export function countTokensOf(text: string): number {
  const state = startTextCount(text);
  countTextTokens(state, () => false);
  return state.tokens;
}

/** Builds the rank table and warms the merge now (start-up), instead of on the first request. */
export function warmTokenizer(): void {
  pairs(ranks());
  // Run the merge once over long runs (pooled scratch included), so the first long prompt meets optimized code.
  countTokensOf("字".repeat(30_000) + "😀".repeat(20_000) + " ".repeat(6_000) + "a".repeat(6_000));
}
