// A dispatcher as a process of its own: `tsx api/webhooks/runDispatcher.ts` with DATABASE_URL, API_DB_SCHEMA,
// INDEXER_URL and the WEBHOOK_* variables. The gateway runs one in-process (startDispatcher); this entry point
// serves extra delivery capacity and the crash/restart tests.
import { z } from "zod";
import { configSchema } from "../config.js";
import { createPool } from "../db/createPool.js";
import { migrate } from "../db/migrate.js";
import { dispatcherDepsFrom } from "./dispatcherFromConfig.js";
import { startDispatcher } from "./startDispatcher.js";

const envSchema = configSchema
  .pick({
    DATABASE_URL: true,
    API_DB_SCHEMA: true,
    INDEXER_URL: true,
    WEBHOOK_ALLOW_HTTP_LOOPBACK: true,
    WEBHOOK_ALLOW_PRIVATE_TARGETS: true,
    WEBHOOK_RETRY_SCHEDULE_MS: true,
    WEBHOOK_TIMEOUT_MS: true,
    WEBHOOK_CA_FILE: true,
  })
  .extend({
    WEBHOOK_DISPATCHER_NAME: z.string().min(1).optional(),
    /** Lease of a claimed delivery (ms); default WEBHOOK_TIMEOUT_MS + 30 s. Tests shorten it. */
    WEBHOOK_LEASE_MS: z.coerce.number().int().positive().optional(),
    /** Deliveries claimed per round; default 32. */
    WEBHOOK_DISPATCH_BATCH: z.coerce.number().int().min(1).max(500).optional(),
  });

const parsed = envSchema.safeParse(process.env);
if (!parsed.success) {
  console.error(
    `Invalid dispatcher configuration:\n${parsed.error.issues.map((i) => `  ${i.path.join(".")}: ${i.message}`).join("\n")}`,
  );
  process.exit(2);
}
const config = parsed.data;
const pool = createPool(config.DATABASE_URL, config.API_DB_SCHEMA);
await migrate(pool, config.API_DB_SCHEMA);
const log = (level: string) => (obj: object, msg?: string) =>
  console.error(JSON.stringify({ level, msg, ...obj, err: (obj as { err?: Error }).err?.message }));
const dispatcher = startDispatcher(
  dispatcherDepsFrom(config, pool, {
    logger: { info: log("info"), warn: log("warn"), error: log("error") },
    ...(config.WEBHOOK_DISPATCHER_NAME ? { owner: config.WEBHOOK_DISPATCHER_NAME } : {}),
    ...(config.WEBHOOK_LEASE_MS ? { leaseMs: config.WEBHOOK_LEASE_MS } : {}),
    ...(config.WEBHOOK_DISPATCH_BATCH ? { batchSize: config.WEBHOOK_DISPATCH_BATCH } : {}),
  }),
);
console.log("dispatcher ready");

for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    void dispatcher
      .stop()
      .then(() => pool.end())
      .then(() => process.exit(0));
  });
}
