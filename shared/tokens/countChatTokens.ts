import { setImmediate as yieldToEventLoop } from "node:timers/promises";
import { countTextTokens, specialTokenIn, startTextCount, warmTokenizer } from "./bytePairCount.js";

/** A chat message as both the gateway and the workers count it. */
export interface ChatText {
  role: "system" | "user" | "assistant";
  content: string;
}

/** Longest stretch of counting between two turns of the event loop. */
export const COUNT_SLICE_MS = 8;

export interface ChatTokenCount {
  /** Exact prompt tokens; when `exceeded`, the count reached so far (at least `limit`). */
  tokens: number;
  exceeded: boolean;
}

/**
 * gpt-4o chat framing as gpt-tokenizer's `encodeChat` writes it: `<|im_start|>role<|im_sep|>content<|im_end|>` per
 * message (4 tokens around the content: every role name is one token) and `<|im_start|>assistant<|im_sep|>` to
 * prime the reply (3). Pinned against `encodeChat` in countChatTokens.test.ts.
 */
export const CHAT_FRAMING = { perMessage: 4, primer: 3 } as const;

/**
 * A message holds the text of a reserved special token (`<|endoftext|>` …). gpt-tokenizer's `encodeChat` refuses
 * such text, so neither the gateway nor a worker counts it: each answers it as a bad request naming the message.
 */
export class ReservedTokenTextError extends Error {
  constructor(
    /** Index of the first message holding reserved text. */
    readonly messageIndex: number,
    /** The reserved text found. */
    readonly text: string,
  ) {
    super(`The text '${text}' is a reserved special token and cannot appear in a message.`);
    this.name = "ReservedTokenTextError";
  }
}

/**
 * Prompt tokens of a conversation: o200k_base with gpt-4o chat framing, exactly what gpt-tokenizer's
 * `encodeChat(messages, "gpt-4o")` returns (`bytePairCount.test.ts`, `countChatTokens.test.ts`). The one counter
 * of the product: the gateway's context check and escrow estimate, and every worker's receipt, use it.
 *
 * Bounded by design (docs/DESIGN.md, "Token counting"): the count runs in slices of at most COUNT_SLICE_MS with a
 * turn of the event loop between them (short prompts finish in the first slice), and stops as soon as it reaches
 * `limit`. The merge is O(n log n), so even a whole 1 MB body costs well under a second of CPU. Long prompts are
 * counted at most LONG_COUNTS_AT_ONCE at a time per process (the merge of a long run holds about 32 bytes of
 * scratch memory per byte), the rest wait their turn.
 *
 * @throws ReservedTokenTextError when a message holds a reserved special-token text.
 */
export async function countChatTokens(
  messages: readonly ChatText[],
  limit = Number.POSITIVE_INFINITY,
): Promise<ChatTokenCount> {
  let tokens = CHAT_FRAMING.primer;
  let length = 0;
  for (const [index, message] of messages.entries()) {
    tokens += CHAT_FRAMING.perMessage;
    length += message.content.length;
    const special = specialTokenIn(message.content);
    if (special !== undefined) throw new ReservedTokenTextError(index, special);
  }
  if (length <= LONG_PROMPT_CHARS) return countSliced(messages, tokens, limit);
  const release = await longCounts.acquire();
  try {
    return await countSliced(messages, tokens, limit);
  } finally {
    release();
  }
}

/**
 * Warms the counter up before the process takes requests: builds the rank table and runs the very path a long
 * prompt takes (sliced, with a limit; the lower bound that stops at the limit; a pooled long merge), a few times, so
 * the first long prompt meets optimized code instead of paying for the compilation; then once at the size of a
 * whole 1 MB body, so the heap and the scratch pool have grown to it before the first such request arrives.
 */
export async function warmUpCounting(): Promise<void> {
  warmTokenizer();
  const long = "😀".repeat(20_000) + "字".repeat(30_000) + " ".repeat(6_000) + "a".repeat(20_000);
  for (let round = 0; round < WARM_UP_ROUNDS; round++) {
    await countChatTokens([{ role: "user", content: long }], 128_000);
    await countChatTokens([{ role: "user", content: long }], 8_000);
  }
  // No limit: with one, the lower bound would stop this count before any merge.
  await countChatTokens([{ role: "user", content: "😀".repeat(125_000) + "字".repeat(160_000) }]);
}

const WARM_UP_ROUNDS = 3;

/** Prompts longer than this (UTF-16 units) count as long: their merge scratch memory is worth limiting. */
export const LONG_PROMPT_CHARS = 64 * 1024;
/** Long prompts counted at the same time (memory: about 32 bytes per byte of the longest piece each). */
export const LONG_COUNTS_AT_ONCE = 2;

/** A counting semaphore: `acquire` resolves with the function that gives the permit back. */
class Permits {
  private free: number;
  private readonly waiting: (() => void)[] = [];

  constructor(count: number) {
    this.free = count;
  }

  async acquire(): Promise<() => void> {
    if (this.free > 0) this.free--;
    else await new Promise<void>((resolve) => this.waiting.push(resolve));
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiting.shift();
      if (next) next();
      else this.free++;
    };
  }
}

const longCounts = new Permits(LONG_COUNTS_AT_ONCE);

async function countSliced(messages: readonly ChatText[], framing: number, limit: number): Promise<ChatTokenCount> {
  let tokens = framing;
  let sliceEnd = performance.now() + COUNT_SLICE_MS;
  const outOfTime = () => performance.now() > sliceEnd;
  for (const message of messages) {
    const state = startTextCount(message.content);
    for (;;) {
      countTextTokens(state, outOfTime, limit - tokens);
      if (state.done || tokens + state.tokens >= limit) break;
      await yieldToEventLoop();
      sliceEnd = performance.now() + COUNT_SLICE_MS;
    }
    tokens += state.tokens;
    if (tokens >= limit) return { tokens, exceeded: true };
  }
  return { tokens, exceeded: false };
}
