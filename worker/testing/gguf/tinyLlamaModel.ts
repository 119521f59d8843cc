import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { encodeGguf } from "./ggufWriter.js";
import type { GgufTensor, GgufValue } from "./ggufWriter.js";

/**
 * A tiny llama-architecture model with seeded random weights, for tests of the `llama` backend: about 100 KB,
 * loads in milliseconds on a CPU, and produces gibberish. What it proves is the path, not the quality.
 *
 * Vocabulary (SentencePiece-style, `tokenizer.ggml.model = "llama"`): `<unk>`, `<s>`, `</s>`, the 256 byte
 * tokens `<0x00>`…`<0xFF>` (so any input text tokenizes), then the 95 printable ASCII characters (space as `▁`).
 *
 * The weights are random except for one steering device: residual dimension 0 holds a constant that no layer
 * writes to, and the output head multiplies it by a large negative weight for every token that is not a
 * printable character. The model therefore only ever emits printable ASCII — never end-of-sequence, a control
 * token or a lone byte — so a completion runs until `max_tokens` or a stop sequence, its text re-tokenizes to
 * exactly the tokens generated, and tests can rely on both.
 */
export const TINY_LLAMA = {
  embeddingLength: 32,
  blockCount: 2,
  headCount: 4,
  headCountKv: 2,
  feedForwardLength: 64,
  contextLength: 512,
} as const;

/** A template of its own (no known family), so node-llama-cpp runs it through its Jinja chat wrapper. */
export const TINY_LLAMA_CHAT_TEMPLATE =
  "{% for message in messages %}{{ '<|' + message['role'] + '|>' + message['content'] + '</s>' }}{% endfor %}" +
  "{% if add_generation_prompt %}{{ '<|assistant|>' }}{% endif %}";

const TOKEN_TYPE = { normal: 1, unknown: 2, control: 3, byte: 6 } as const;

type Vocabulary = { tokens: string[]; types: number[] };

function vocabulary(): Vocabulary {
  const tokens = ["<unk>", "<s>", "</s>"];
  const types: number[] = [TOKEN_TYPE.unknown, TOKEN_TYPE.control, TOKEN_TYPE.control];
  for (let byte = 0; byte < 256; byte++) {
    tokens.push(`<0x${byte.toString(16).toUpperCase().padStart(2, "0")}>`);
    types.push(TOKEN_TYPE.byte);
  }
  for (let code = 0x20; code <= 0x7e; code++) {
    tokens.push(code === 0x20 ? "\u2581" : String.fromCharCode(code));
    types.push(TOKEN_TYPE.normal);
  }
  return { tokens, types };
}

/** mulberry32: a small seeded generator, so the same seed always writes the same file. */
function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

function gaussian(random: () => number): number {
  const u = Math.max(random(), 1e-12);
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * random());
}

/** Steering constant held in residual dimension 0 (see the module comment). */
const ANCHOR = 4;
const SUPPRESSED_LOGIT_WEIGHT = -40;

/** Builds the GGUF bytes of the tiny model for `seed`. */
export function buildTinyLlamaGguf(seed = 1): Buffer {
  const random = seededRandom(seed);
  const { embeddingLength: embd, blockCount, headCount, headCountKv, feedForwardLength: ff } = TINY_LLAMA;
  const headDim = embd / headCount;
  const kvDim = headDim * headCountKv;
  const { tokens, types } = vocabulary();
  const vocab = tokens.length;

  const randomMatrix = (inputs: number, outputs: number, scale: number): Float32Array => {
    const data = new Float32Array(inputs * outputs);
    for (let i = 0; i < data.length; i++) data[i] = gaussian(random) * scale;
    return data;
  };
  /** Layers write nothing into residual dimension 0 (row 0 of their output projection). */
  const sparingAnchor = (inputs: number, scale: number): Float32Array => {
    const data = randomMatrix(inputs, embd, scale);
    data.fill(0, 0, inputs);
    return data;
  };
  /** RMS-norm weights that hide the anchor from the layer they feed. */
  const normIgnoringAnchor = (): Float32Array => {
    const data = new Float32Array(embd).fill(1);
    data[0] = 0;
    return data;
  };

  const tokenEmbedding = randomMatrix(embd, vocab, 0.5);
  for (let token = 0; token < vocab; token++) tokenEmbedding[token * embd] = ANCHOR;

  const output = new Float32Array(embd * vocab);
  for (let token = 0; token < vocab; token++) {
    const row = token * embd;
    if (types[token] === TOKEN_TYPE.normal) {
      for (let i = 1; i < embd; i++) output[row + i] = gaussian(random);
    } else {
      output[row] = SUPPRESSED_LOGIT_WEIGHT;
    }
  }

  const tensors: GgufTensor[] = [{ name: "token_embd.weight", shape: [embd, vocab], data: tokenEmbedding }];
  for (let block = 0; block < blockCount; block++) {
    const prefix = `blk.${block}`;
    tensors.push(
      { name: `${prefix}.attn_norm.weight`, shape: [embd], data: normIgnoringAnchor() },
      { name: `${prefix}.attn_q.weight`, shape: [embd, embd], data: randomMatrix(embd, embd, 0.3) },
      { name: `${prefix}.attn_k.weight`, shape: [embd, kvDim], data: randomMatrix(embd, kvDim, 0.3) },
      { name: `${prefix}.attn_v.weight`, shape: [embd, kvDim], data: randomMatrix(embd, kvDim, 0.3) },
      { name: `${prefix}.attn_output.weight`, shape: [embd, embd], data: sparingAnchor(embd, 0.3) },
      { name: `${prefix}.ffn_norm.weight`, shape: [embd], data: normIgnoringAnchor() },
      { name: `${prefix}.ffn_gate.weight`, shape: [embd, ff], data: randomMatrix(embd, ff, 0.3) },
      { name: `${prefix}.ffn_up.weight`, shape: [embd, ff], data: randomMatrix(embd, ff, 0.3) },
      { name: `${prefix}.ffn_down.weight`, shape: [ff, embd], data: sparingAnchor(ff, 0.3) },
    );
  }
  tensors.push(
    { name: "output_norm.weight", shape: [embd], data: new Float32Array(embd).fill(1) },
    { name: "output.weight", shape: [embd, vocab], data: output },
  );

  const metadata: Record<string, GgufValue> = {
    "general.architecture": { type: "string", value: "llama" },
    "general.name": { type: "string", value: "tiny-random-llama" },
    "general.alignment": { type: "uint32", value: 32 },
    "llama.context_length": { type: "uint32", value: TINY_LLAMA.contextLength },
    "llama.embedding_length": { type: "uint32", value: embd },
    "llama.block_count": { type: "uint32", value: blockCount },
    "llama.feed_forward_length": { type: "uint32", value: ff },
    "llama.attention.head_count": { type: "uint32", value: headCount },
    "llama.attention.head_count_kv": { type: "uint32", value: headCountKv },
    "llama.rope.dimension_count": { type: "uint32", value: headDim },
    "llama.rope.freq_base": { type: "float32", value: 10_000 },
    "llama.attention.layer_norm_rms_epsilon": { type: "float32", value: 1e-5 },
    "llama.vocab_size": { type: "uint32", value: vocab },
    "tokenizer.ggml.model": { type: "string", value: "llama" },
    "tokenizer.ggml.tokens": { type: "string[]", value: tokens },
    "tokenizer.ggml.scores": { type: "float32[]", value: tokens.map(() => 0) },
    "tokenizer.ggml.token_type": { type: "int32[]", value: types },
    "tokenizer.ggml.unknown_token_id": { type: "uint32", value: 0 },
    "tokenizer.ggml.bos_token_id": { type: "uint32", value: 1 },
    "tokenizer.ggml.eos_token_id": { type: "uint32", value: 2 },
    "tokenizer.ggml.add_bos_token": { type: "bool", value: true },
    "tokenizer.ggml.add_eos_token": { type: "bool", value: false },
    "tokenizer.ggml.add_space_prefix": { type: "bool", value: false },
    "tokenizer.chat_template": { type: "string", value: TINY_LLAMA_CHAT_TEMPLATE },
  };
  return encodeGguf(metadata, tensors);
}

/** Writes the tiny model to `directory/tiny-llama-<seed>.gguf` and returns the file's path. */
export async function writeTinyLlamaGguf(directory: string, seed = 1): Promise<string> {
  await mkdir(directory, { recursive: true });
  const file = path.join(directory, `tiny-llama-${seed}.gguf`);
  await writeFile(file, buildTinyLlamaGguf(seed));
  return file;
}
