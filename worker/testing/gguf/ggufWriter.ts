/**
 * A minimal GGUF v3 writer (https://github.com/ggml-org/ggml/blob/master/docs/gguf.md): metadata key/values and
 * F32 tensors, nothing else. Enough to produce model files that llama.cpp loads, for tests.
 */

/** GGUF metadata value types (the numbers are the format's). */
const TYPE = {
  uint32: 4,
  int32: 5,
  float32: 6,
  bool: 7,
  string: 8,
  array: 9,
} as const;

const GGML_TYPE_F32 = 0;
const ALIGNMENT = 32;

export type GgufValue =
  | { type: "uint32"; value: number }
  | { type: "int32"; value: number }
  | { type: "float32"; value: number }
  | { type: "bool"; value: boolean }
  | { type: "string"; value: string }
  | { type: "string[]"; value: readonly string[] }
  | { type: "float32[]"; value: readonly number[] }
  | { type: "int32[]"; value: readonly number[] };

export type GgufTensor = {
  name: string;
  /** GGML order: `shape[0]` is the innermost (contiguous) dimension. */
  shape: readonly number[];
  data: Float32Array;
};

/** Growable little-endian byte buffer. */
class ByteSink {
  private buffer = Buffer.alloc(1 << 16);
  length = 0;

  private reserve(bytes: number): void {
    if (this.length + bytes <= this.buffer.length) return;
    let size = this.buffer.length * 2;
    while (size < this.length + bytes) size *= 2;
    const next = Buffer.alloc(size);
    this.buffer.copy(next, 0, 0, this.length);
    this.buffer = next;
  }

  u32(value: number): void {
    this.reserve(4);
    this.buffer.writeUInt32LE(value, this.length);
    this.length += 4;
  }

  i32(value: number): void {
    this.reserve(4);
    this.buffer.writeInt32LE(value, this.length);
    this.length += 4;
  }

  u64(value: number): void {
    this.reserve(8);
    this.buffer.writeBigUInt64LE(BigInt(value), this.length);
    this.length += 8;
  }

  f32(value: number): void {
    this.reserve(4);
    this.buffer.writeFloatLE(value, this.length);
    this.length += 4;
  }

  u8(value: number): void {
    this.reserve(1);
    this.buffer.writeUInt8(value, this.length);
    this.length += 1;
  }

  string(value: string): void {
    const bytes = Buffer.from(value, "utf8");
    this.u64(bytes.length);
    this.bytes(bytes);
  }

  bytes(bytes: Uint8Array): void {
    this.reserve(bytes.length);
    this.buffer.set(bytes, this.length);
    this.length += bytes.length;
  }

  padTo(alignment: number): void {
    while (this.length % alignment !== 0) this.u8(0);
  }

  toBuffer(): Buffer {
    return this.buffer.subarray(0, this.length);
  }
}

function writeValue(sink: ByteSink, value: GgufValue): void {
  switch (value.type) {
    case "uint32":
      sink.u32(TYPE.uint32);
      sink.u32(value.value);
      return;
    case "int32":
      sink.u32(TYPE.int32);
      sink.i32(value.value);
      return;
    case "float32":
      sink.u32(TYPE.float32);
      sink.f32(value.value);
      return;
    case "bool":
      sink.u32(TYPE.bool);
      sink.u8(value.value ? 1 : 0);
      return;
    case "string":
      sink.u32(TYPE.string);
      sink.string(value.value);
      return;
    case "string[]":
      sink.u32(TYPE.array);
      sink.u32(TYPE.string);
      sink.u64(value.value.length);
      for (const item of value.value) sink.string(item);
      return;
    case "float32[]":
      sink.u32(TYPE.array);
      sink.u32(TYPE.float32);
      sink.u64(value.value.length);
      for (const item of value.value) sink.f32(item);
      return;
    case "int32[]":
      sink.u32(TYPE.array);
      sink.u32(TYPE.int32);
      sink.u64(value.value.length);
      for (const item of value.value) sink.i32(item);
      return;
  }
}

/** Serialises a GGUF v3 file: header, metadata, tensor infos, then the 32-byte aligned tensor data. */
export function encodeGguf(metadata: Readonly<Record<string, GgufValue>>, tensors: readonly GgufTensor[]): Buffer {
  const sink = new ByteSink();
  sink.bytes(Buffer.from("GGUF", "ascii"));
  sink.u32(3);
  sink.u64(tensors.length);
  const entries = Object.entries(metadata);
  sink.u64(entries.length);
  for (const [key, value] of entries) {
    sink.string(key);
    writeValue(sink, value);
  }

  let offset = 0;
  for (const tensor of tensors) {
    const elements = tensor.shape.reduce((product, dim) => product * dim, 1);
    if (elements !== tensor.data.length) {
      throw new Error(`tensor ${tensor.name}: shape holds ${elements} values, data has ${tensor.data.length}`);
    }
    sink.string(tensor.name);
    sink.u32(tensor.shape.length);
    for (const dim of tensor.shape) sink.u64(dim);
    sink.u32(GGML_TYPE_F32);
    sink.u64(offset);
    offset += Math.ceil((elements * 4) / ALIGNMENT) * ALIGNMENT;
  }

  sink.padTo(ALIGNMENT);
  for (const tensor of tensors) {
    sink.bytes(new Uint8Array(tensor.data.buffer, tensor.data.byteOffset, tensor.data.byteLength));
    sink.padTo(ALIGNMENT);
  }
  return sink.toBuffer();
}
