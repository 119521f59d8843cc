import { z } from "zod";

/** A JSON Schema (or OpenAPI object) as plain data. */
export type JsonSchema = Record<string, unknown>;

/**
 * zod's JSON Schema without what the document does not need: the per-schema `$schema`/`$id` header and the `id`
 * metadata (it names the component). Everything else stays, the safe-integer bounds zod puts on every integer
 * included: the validators enforce them (an integer beyond ±2^53−1 is refused), so the document states them too.
 */
export function tidy(value: unknown, root = true): unknown {
  if (Array.isArray(value)) return value.map((item) => tidy(item, false));
  if (value === null || typeof value !== "object") return value;
  const out: JsonSchema = {};
  for (const [key, inner] of Object.entries(value)) {
    if (root && (key === "$schema" || key === "$id" || key === "id")) continue;
    // `properties` maps names to schemas: a property called `id` is no metadata.
    out[key] =
      key === "properties" && inner !== null && typeof inner === "object"
        ? Object.fromEntries(Object.entries(inner).map(([name, schema]) => [name, tidy(schema, false)]))
        : tidy(inner, false);
  }
  return out;
}

/** One schema outside the components (a header, a parameter), as the server reads or writes it. */
export const inline = (schema: z.ZodType): JsonSchema => tidy(z.toJSONSchema(schema, { io: "output" })) as JsonSchema;
