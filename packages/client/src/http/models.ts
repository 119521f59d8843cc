import { z } from "zod";
import { components, tierSchema } from "./common.js";

/** `ModelCatalog.MAX_MODEL_ID_LENGTH`: the catalog refuses longer ids (UTF-8 bytes). */
export const MAX_MODEL_ID_BYTES = 64;

/** The characters a model id may hold (no control characters, no lone surrogates), at least one. */
export const MODEL_ID_PATTERN = "^[^\\p{Cc}\\p{Cs}]+$";
export const MODEL_ID_TEXT = new RegExp(MODEL_ID_PATTERN, "u");

/**
 * Whether `value` is a well-formed `model` filter of `GET /v1/jobs`: 1–MAX_MODEL_ID_BYTES characters (the unit the
 * OpenAPI document's `maxLength` counts) of MODEL_ID_PATTERN. A filter no id can equal (over 64 bytes) matches no
 * job; one with a control character is refused before it could reach the database (Postgres text cannot hold NUL).
 */
export function isModelFilter(value: string): boolean {
  return [...value].length <= MAX_MODEL_ID_BYTES && MODEL_ID_TEXT.test(value);
}

/**
 * The `model` filter of the job lists. Checked by `isModelFilter` (code points, as JSON Schema counts them, where
 * zod's `max` counts UTF-16 units); the document states the same bounds.
 */
export const modelFilterSchema = z
  .string()
  .refine(isModelFilter, "model must be a model id (1–64 characters, no control characters)")
  .meta({
    description: "A model id: 1–64 characters without control characters (an id no job has matches none).",
    minLength: 1,
    maxLength: MAX_MODEL_ID_BYTES,
    pattern: MODEL_ID_PATTERN,
  });

/** The Model resource (spec) with its `service` extension: the spec's fields, then the trust figures. */
export const modelSchema = z
  .object({
    id: z.string(),
    object: z.literal("model"),
    created: z.number().int().meta({ description: "Unix seconds." }),
    owned_by: z.string(),
    service: z.object({
      tier: tierSchema,
      credits_per_request: z.number().int().min(0),
      credits_per_1k_tokens: z.number().int().min(0),
      active_workers: z.number().int().min(1),
      median_latency_ms: z
        .number()
        .int()
        .min(0)
        .meta({ description: "p50 time to first token across workers; 0 before any job was served." }),
      parameters: z.string(),
      context_window: z.number().int().min(1),
      stats_window_hours: z
        .number()
        .int()
        .min(1)
        .meta({ description: "The window the figures below cover: the last this many hours." }),
      jobs_observed: z
        .number()
        .int()
        .min(0)
        .meta({ description: "Jobs of the model that ended in the window (the base of `success_rate`)." }),
      p95_time_to_first_token_ms: z
        .number()
        .int()
        .min(0)
        .nullable()
        .meta({ description: "p95 time from the request to its first token, over the window; null without jobs." }),
      success_rate: z
        .number()
        .min(0)
        .max(1)
        .nullable()
        .meta({ description: "Share of the window's jobs that produced an answer; null without jobs." }),
      disputes_opened: z.number().int().min(0).meta({ description: "Disputes opened in the window." }),
      disputes_upheld: z
        .number()
        .int()
        .min(0)
        .meta({ description: "Of those, upheld by the arbiter (the worker was slashed)." }),
    }),
  })
  .register(components, { id: "Model" });
export type Model = z.infer<typeof modelSchema>;

export const modelListSchema = z
  .object({ object: z.literal("list"), data: z.array(modelSchema) })
  .register(components, { id: "ModelList" });
export type ModelList = z.infer<typeof modelListSchema>;
