// A dispatcher as a process of its own: `tsx api/webhooks/runDispatcher.ts` with DATABASE_URL, API_DB_SCHEMA,
// INDEXER_URL and the WEBHOOK_* variables (api/config.ts, `dispatcherConfigSchema`). The gateway runs one
// in-process (startDispatcher); this entry point serves extra delivery capacity and the crash/restart tests.
import { loadDispatcherConfig, type DispatcherConfig } from "../config.js";
import { createPool } from "../db/createPool.js";
import { migrate } from "../db/migrate.js";
import { dispatcherDepsFrom } from "./dispatcherFromConfig.js";
import { startDispatcher } from "./startDispatcher.js";

let config: DispatcherConfig;
try {
  config = loadDispatcherConfig(process.env);
} catch (error) {
  console.error((error as Error).message);
  process.exit(2);
}
const pool = createPool(config.DATABASE_URL, config.API_DB_SCHEMA, undefined, undefined, {
  synchronousCommit: config.DB_SYNCHRONOUS_COMMIT,
  prepareStatements: config.DB_PREPARED_STATEMENTS,
});
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
