import { createHash } from "node:crypto";
import type { ChatMessage } from "./types.js";
import { countTextTokens } from "../tokenizer.js";

/** Every simulated completion starts with this, so nobody mistakes it for model output. */
export const SIMULATED_PREFIX = "[simulated]";

// ASCII only: every o200k token of the text then decodes to a whole string on its own, so the token events
// concatenate to exactly the text that is hashed.
const WORDS = [
  "the",
  "worker",
  "escrow",
  "credit",
  "token",
  "model",
  "answer",
  "stream",
  "ledger",
  "proof",
  "settles",
  "quickly",
  "every",
  "job",
  "holds",
  "a",
  "receipt",
  "signed",
  "by",
  "its",
  "key",
  "and",
  "chain",
  "records",
  "hash",
  "for",
  "client",
  "gateway",
  "routes",
  "request",
  "to",
  "healthy",
  "pool",
  "of",
  "nodes",
  "that",
  "serve",
  "tiers",
  "with",
  "prices",
  "per",
  "thousand",
  "tokens",
  "while",
  "deposits",
  "stay",
  "locked",
  "until",
  "completion",
  "is",
  "verified",
  "on",
  "network",
  "where",
  "disputes",
  "open",
  "within",
  "sixty",
  "seconds",
  "after",
  "final",
  "output",
  "arrives",
  "simulated",
  "text",
  "flows",
  "steady",
  "rate",
  "from",
  "deterministic",
  "seed",
  "so",
  "tests",
  "repeat",
  "exactly",
  "nothing",
  "here",
  "comes",
  "real",
  "language",
  "only",
  "placeholder",
  "words",
  "in",
  "order",
  "chosen",
  "random",
  "generator",
  "fixed",
  "list",
  "measured",
  "latency",
  "first",
  "time",
  "budget",
  "refund",
  "timeout",
  "slashing",
];

/** sfc32: a small, fast PRNG with 128 bits of state, fully determined by the seed bytes. */
function seededRandom(seed: Buffer): () => number {
  let a = seed.readUInt32LE(0);
  let b = seed.readUInt32LE(4);
  let c = seed.readUInt32LE(8);
  let d = seed.readUInt32LE(12);
  return () => {
    const t = (((a + b) | 0) + d) | 0;
    d = (d + 1) | 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) | 0;
    c = (c << 21) | (c >>> 11);
    c = (c + t) | 0;
    return (t >>> 0) / 4_294_967_296;
  };
}

export type SimulatedTextParams = {
  model: string;
  messages: readonly ChatMessage[];
  seed: number | undefined;
  minOutputTokens: number;
  maxOutputTokens: number;
};

/**
 * The complete natural completion for a request: a function of (model, messages, seed) only, between
 * `minOutputTokens` and about one sentence more than `maxOutputTokens` tokens long, ending with a full stop.
 */
export function simulatedText(params: SimulatedTextParams): string {
  const seedBytes = createHash("sha256")
    .update(JSON.stringify({ model: params.model, messages: params.messages, seed: params.seed ?? 0 }))
    .digest();
  const random = seededRandom(seedBytes);
  // Warm the generator up: the first outputs of sfc32 correlate with the raw seed words.
  for (let i = 0; i < 12; i += 1) random();
  const span = params.maxOutputTokens - params.minOutputTokens + 1;
  const target = params.minOutputTokens + Math.floor(random() * span);

  let text = SIMULATED_PREFIX;
  // Sentences begin with a space, which is also where o200k splits words, so counts add up sentence by sentence.
  let tokens = countTextTokens(text);
  while (tokens < target) {
    const length = 4 + Math.floor(random() * 9);
    const words: string[] = [];
    for (let i = 0; i < length; i += 1) words.push(WORDS[Math.floor(random() * WORDS.length)] ?? "token");
    const first = words[0] ?? "token";
    words[0] = first.charAt(0).toUpperCase() + first.slice(1);
    const sentence = ` ${words.join(" ")}.`;
    text += sentence;
    tokens += countTextTokens(sentence);
  }
  return text;
}
