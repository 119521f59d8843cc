import { z } from "zod";

const envSchema = z.object({
  DEPLOYMENTS_FILE: z
    .string({ error: "DEPLOYMENTS_FILE (path of the deployments JSON) is required" })
    .min(1, "DEPLOYMENTS_FILE (path of the deployments JSON) is required"),
  PONDER_RPC_URL: z.url({ error: "PONDER_RPC_URL (the chain's JSON-RPC URL) is required" }),
  /** Optional WebSocket URL: new blocks arrive by subscription instead of polling. */
  PONDER_WS_URL: z.url().optional(),
  /** Milliseconds between polls for new blocks (Ponder's minimum is 100). */
  PONDER_POLLING_INTERVAL_MS: z.coerce.number().int().min(100).default(100),
});

export type IndexerEnv = z.infer<typeof envSchema>;

/** The indexer's environment, validated once at start-up. */
export function readIndexerEnv(env: NodeJS.ProcessEnv = process.env): IndexerEnv {
  const parsed = envSchema.safeParse(env);
  if (!parsed.success) throw new Error(`indexer environment: ${z.prettifyError(parsed.error)}`);
  return parsed.data;
}
