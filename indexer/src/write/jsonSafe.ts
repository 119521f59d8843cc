/** JSON column values: bigints become decimal strings, arrays and plain objects are converted deeply. */
export type JsonSafe = string | number | boolean | null | JsonSafe[] | { [key: string]: JsonSafe };

export function toJsonSafe(value: unknown): JsonSafe {
  if (typeof value === "bigint") return value.toString();
  if (value === null || value === undefined) return null;
  if (typeof value === "string" || typeof value === "number" || typeof value === "boolean") return value;
  if (Array.isArray(value)) return value.map(toJsonSafe);
  if (typeof value === "object") {
    const out: { [key: string]: JsonSafe } = {};
    for (const [key, item] of Object.entries(value)) out[key] = toJsonSafe(item);
    return out;
  }
  return String(value);
}
