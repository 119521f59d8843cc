import { z } from "zod";

/**
 * The schema lock's heartbeat when the environment sets none: the patched Ponder's own defaults
 * (patches/ponder+0.16.10.patch, `internal/options.js`), repeated here only to check a value that sets one of them.
 */
const PATCHED_PONDER_HEARTBEAT_INTERVAL_MS = 2_000;
const PATCHED_PONDER_HEARTBEAT_TIMEOUT_MS = 8_000;

const envSchema = z
  .object({
    DEPLOYMENTS_FILE: z
      .string({ error: "DEPLOYMENTS_FILE (path of the deployments JSON) is required" })
      .min(1, "DEPLOYMENTS_FILE (path of the deployments JSON) is required"),
    PONDER_RPC_URL: z.url({ error: "PONDER_RPC_URL (the chain's JSON-RPC URL) is required" }),
    /** More JSON-RPC endpoints of the same chain, comma separated, tried after PONDER_RPC_URL when it is silent. */
    PONDER_RPC_FALLBACK_URLS: z
      .string()
      .default("")
      .transform((value) =>
        value
          .split(",")
          .map((part) => part.trim())
          .filter((part) => part.length > 0),
      )
      .pipe(z.array(z.url())),
    /** Optional WebSocket URL: new blocks arrive by subscription instead of polling. */
    PONDER_WS_URL: z.url().optional(),
    /**
     * JSON-RPC requests per second the indexer may send (Ponder's `maxRequestsPerSecond`, which the patched Ponder
     * starts its adaptive limiter at and caps it by; it still backs off on rate-limit errors). Unset: Ponder's own
     * start (20, rising slowly) for a hosted chain, no practical limit for a local node (ponder.config.ts).
     */
    PONDER_RPC_MAX_RPS: z.coerce.number().int().min(1).optional(),
    /** Milliseconds between polls for new blocks (Ponder's minimum is 100). */
    PONDER_POLLING_INTERVAL_MS: z.coerce.number().int().min(100).default(100),
    /** One JSON-RPC attempt gives up after this long; the request is then retried (config/chainTransport.ts). */
    PONDER_RPC_ATTEMPT_TIMEOUT_MS: z.coerce.number().int().min(100).default(2_000),
    /** With fallback URLs: an endpoint silent for this long gets the next one asked alongside (first answer wins). */
    PONDER_RPC_HEDGE_AFTER_MS: z.coerce.number().int().min(50).default(500),
    /** A head poll the node does not answer within this long gets the last known head instead. */
    PONDER_RPC_HEAD_TIMEOUT_MS: z.coerce.number().int().min(50).default(1_000),
    /** How long one request is retried while the node does not answer at all, before Ponder sees an error. */
    PONDER_RPC_STALL_BUDGET_MS: z.coerce.number().int().min(1_000).default(120_000),
    /** Index lag (seconds) beyond which the indexer's `/lag/ready` answers 503 (see indexer/README.md). */
    INDEX_LAG_READY_MAX_SECONDS: z.coerce.number().positive().default(30),
    /**
     * The schema lock's heartbeat, read by the patched Ponder itself (default 2,000 ms; indexer/README.md "Restart after
     * a crash"); checked here so that a bad value stops the start with a clear message.
     */
    PONDER_DATABASE_HEARTBEAT_INTERVAL_MS: z.coerce.number().int().min(500).optional(),
    /** A lock whose heartbeat is older than this is taken over by a starting instance (default 8,000 ms). */
    PONDER_DATABASE_HEARTBEAT_TIMEOUT_MS: z.coerce.number().int().min(1_000).optional(),
  })
  .refine(
    (env) =>
      (env.PONDER_DATABASE_HEARTBEAT_TIMEOUT_MS ?? PATCHED_PONDER_HEARTBEAT_TIMEOUT_MS) >=
      3 * (env.PONDER_DATABASE_HEARTBEAT_INTERVAL_MS ?? PATCHED_PONDER_HEARTBEAT_INTERVAL_MS),
    {
      message:
        "PONDER_DATABASE_HEARTBEAT_TIMEOUT_MS must be at least three heartbeat intervals (PONDER_DATABASE_HEARTBEAT_INTERVAL_MS), or a live indexer's lock could be taken over",
      path: ["PONDER_DATABASE_HEARTBEAT_TIMEOUT_MS"],
    },
  );

export type IndexerEnv = z.infer<typeof envSchema>;

/** The indexer's environment, validated once at start-up. */
export function readIndexerEnv(env: NodeJS.ProcessEnv = process.env): IndexerEnv {
  const parsed = envSchema.safeParse(env);
  if (!parsed.success) throw new Error(`indexer environment: ${z.prettifyError(parsed.error)}`);
  return parsed.data;
}
