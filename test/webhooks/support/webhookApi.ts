import type { AddressInfo } from "node:net";
import type { Server } from "node:http";
import { createClient, eq } from "@ponder/client";
import { Router, type Request } from "express";
import pino from "pino";
import type pg from "pg";
import type { Hex } from "viem";
import * as schema from "../../../indexer/ponder.schema.js";
import { createApp } from "../../../api/http/createApp.js";
import { authenticate, type KeyDirectory } from "../../../api/http/middleware/authenticate.js";
import { appWebhooksRouter, webhooksRouter, type TargetPolicy } from "../../../api/webhooks/index.js";

/** Keys as the index knows them (@ponder/client over /sql), the gateway's fallback path. */
export function indexKeyDirectory(indexerUrl: string): KeyDirectory {
  const client = createClient(`${indexerUrl}/sql`, { schema });
  return {
    async lookup(keyHash) {
      const rows = await client.db.select().from(schema.apiKey).where(eq(schema.apiKey.keyHash, keyHash)).limit(1);
      const row = rows[0];
      if (!row) return null;
      const status = row.status === "active" || row.status === "suspended" ? row.status : "revoked";
      return { wallet: row.wallet as Hex, status };
    },
  };
}

/**
 * The webhook routes as the gateway mounts them: `/v1/*` behind `authenticate`, `/app/webhooks/*` with a
 * wallet resolver. TEST DOUBLE for the SIWE session (not built yet): the `x-test-wallet` header names the wallet.
 */
export async function startWebhookApi(options: {
  pool: pg.Pool;
  keys: KeyDirectory;
  policy: TargetPolicy;
  port: number;
}): Promise<{ baseUrl: string; close: () => Promise<void> }> {
  const v1 = Router();
  v1.use("/v1", authenticate(options.keys));
  v1.use(webhooksRouter({ pool: options.pool, policy: options.policy }));
  const appRoutes = appWebhooksRouter({
    pool: options.pool,
    resolveWallet: async (req: Request) => {
      const wallet = req.headers["x-test-wallet"];
      return typeof wallet === "string" ? wallet : null;
    },
  });
  const app = createApp({
    docsUrl: "http://docs.test",
    bodyLimit: "1mb",
    logger: pino({ level: "silent" }),
    routers: [appRoutes, v1],
  });
  const server: Server = await new Promise((resolve) => {
    const s = app.listen(options.port, "127.0.0.1", () => resolve(s));
  });
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
