import type pg from "pg";
import type { LocalAccount } from "viem";
import { ponderIndexReader, type IndexReader } from "../../../api/webhooks/chainEventFeed.js";
import type { EventName } from "@credit-metered/client/http";
import { startDispatcher, type Dispatcher, type DispatcherDeps } from "../../../api/webhooks/startDispatcher.js";
import { insertWebhook } from "../../../api/webhooks/webhookStore.js";
import { chainActions, type ChainActions } from "./chainActions.js";
import { startHttpsReceiver, type HttpsReceiver, type HttpsReceiverOptions } from "./httpsReceiver.js";
import { selfSignedCert, type SelfSignedCert } from "./selfSignedCert.js";
import { freshGatewaySchema, loadStackDeployment, type WebhookStackInfo } from "./startWebhookStack.js";

/** Compressed retry schedule of the tests (the spec's is 0, 30 s, 5 min, 30 min, 2 h). */
export const TEST_SCHEDULE_MS = [0, 200, 200, 200, 200];

export interface WebhookFixture {
  chain: ChainActions;
  pool: pg.Pool;
  schema: string;
  cert: SelfSignedCert;
  receiver: HttpsReceiver;
  wallet: LocalAccount;
  webhookId: string;
  secret: string;
  startDispatcher(
    options?: {
      timeoutMs?: number;
      owner?: string;
      /** Wraps the index the dispatcher reads (to watch its reads). */
      wrapIndex?: (index: IndexReader) => IndexReader;
    } & Pick<DispatcherDeps, "indexChannel" | "ingestIntervalMs" | "ingestFallbackMs" | "indexTables">,
  ): Dispatcher;
  close(): Promise<void>;
}

/**
 * One test's world on the shared stack: its own gateway schema, its own wallet (HD index), a receiver TEST DOUBLE
 * on its own port, and a webhook of that wallet subscribed to `events`.
 */
export async function webhookFixture(
  stack: WebhookStackInfo,
  options: {
    name: string;
    walletIndex: number;
    receiverPort: number;
    events?: EventName[];
    receiverOptions?: HttpsReceiverOptions;
  },
): Promise<WebhookFixture> {
  const chain = chainActions(stack.rpcUrl, loadStackDeployment(stack));
  const { pool, schema } = await freshGatewaySchema(stack.databaseUrl, options.name);
  const cert = selfSignedCert();
  const receiver = await startHttpsReceiver(cert, options.receiverPort, options.receiverOptions);
  const wallet = await chain.wallet(options.walletIndex);
  const secret = `whsec_test_${options.name}_0123456789`;
  const webhook = await insertWebhook(pool, {
    wallet: wallet.address,
    url: receiver.url,
    events: options.events ?? ["credit.topup"],
    secret,
  });
  const dispatchers: Dispatcher[] = [];
  return {
    chain,
    pool,
    schema,
    cert,
    receiver,
    wallet,
    webhookId: webhook.id,
    secret,
    startDispatcher(dispatcherOptions = {}) {
      const { timeoutMs: _timeout, owner: _owner, wrapIndex, ...ingestion } = dispatcherOptions;
      const index = ponderIndexReader(stack.indexerUrl);
      const dispatcher = startDispatcher({
        ...ingestion,
        pool,
        index: wrapIndex ? wrapIndex(index) : index,
        policy: { allowPrivateTargets: true, allowHttpLoopback: false },
        retryScheduleMs: TEST_SCHEDULE_MS,
        timeoutMs: dispatcherOptions.timeoutMs ?? 2_000,
        extraCa: cert.cert,
        ...(dispatcherOptions.owner ? { owner: dispatcherOptions.owner } : {}),
      });
      dispatchers.push(dispatcher);
      return dispatcher;
    },
    async close() {
      await Promise.all(dispatchers.map((d) => d.stop()));
      await receiver.close();
      await pool.end();
    },
  };
}

export interface AttemptRow {
  attempt_number: number;
  status_code: number | null;
  error: string | null;
  ok: boolean;
  started_at: Date;
  duration_ms: number;
  dispatcher: string | null;
}

export async function attemptsOf(pool: pg.Pool, webhookId: string): Promise<AttemptRow[]> {
  const { rows } = await pool.query<AttemptRow>(
    `SELECT a.attempt_number, a.status_code, a.error, a.ok, a.started_at, a.duration_ms, a.dispatcher
     FROM webhook_attempt a JOIN webhook_delivery d ON d.id = a.delivery_id
     WHERE d.webhook_id = $1 ORDER BY a.started_at, a.id`,
    [webhookId],
  );
  return rows;
}

export async function deliveriesOf(
  pool: pg.Pool,
  webhookId: string,
): Promise<Array<{ id: string; event_id: string; status: string }>> {
  const { rows } = await pool.query<{ id: string; event_id: string; status: string }>(
    "SELECT id, event_id, status FROM webhook_delivery WHERE webhook_id = $1 ORDER BY id",
    [webhookId],
  );
  return rows;
}

export async function webhookStatus(pool: pg.Pool, webhookId: string): Promise<string> {
  const { rows } = await pool.query<{ status: string }>("SELECT status FROM webhook WHERE id = $1", [webhookId]);
  return rows[0]?.status ?? "missing";
}
