import type { GatewayDeps } from "../../deps.js";
import { ApiError } from "../../errors/ApiError.js";
import { serviceUnavailable } from "../../errors/dependencyOutage.js";
import { withDeadline } from "../../runtime/withDeadline.js";
import type { Endpoint } from "../endpoint.js";

/**
 * `GET /readyz`: the database, chain and index answer too, the index is no more than
 * INDEX_LAG_READY_MAX_SECONDS behind the chain, and no gateway transaction has waited to be mined longer than
 * TX_PENDING_READY_MAX_MS (a stuck signer: fees above the cap, a node that lost it). No key needed; each check waits at most READY_CHECK_TIMEOUT_MS, so
 * the probe itself never hangs.
 */
export const getReadyz: Endpoint<Pick<GatewayDeps, "config" | "pool" | "chain" | "index" | "indexLag">> = {
  method: "get",
  path: "/readyz",
  access: "open",
  handler: (deps) => async (_req, res) => {
    const timeoutMs = deps.config.READY_CHECK_TIMEOUT_MS;
    const [database, chain, index] = await Promise.all([
      check(() => withDeadline(deps.pool.query("SELECT 1"), timeoutMs, "database")),
      check(() => withDeadline(deps.chain.blockNumber(), timeoutMs, "chain")),
      check(() => withDeadline(deps.index.indexedBlock(), timeoutMs, "index")),
    ]);
    // The background sample keeps the lag current without waiting on the chain here.
    const lag = deps.indexLag.snapshot();
    const maxLag = deps.config.INDEX_LAG_READY_MAX_SECONDS;
    const lagging = lag.lagSeconds !== undefined && lag.lagSeconds > maxLag;
    const tx = deps.chain.sender.manager.health();
    const txStuck = tx.oldestPendingAgeMs > deps.config.TX_PENDING_READY_MAX_MS;
    const failed = [
      ...(database ? [] : ["database unavailable"]),
      ...(chain ? [] : ["chain unavailable"]),
      ...(index ? [] : ["index unavailable"]),
      ...(lagging ? [`index ${Math.round(lag.lagSeconds ?? 0)} s behind the chain (limit ${maxLag} s)`] : []),
      ...(txStuck ? [`a gateway transaction pending for ${Math.round(tx.oldestPendingAgeMs / 1000)} s`] : []),
    ];
    const transactions = {
      pending: tx.pending,
      oldest_pending_seconds: Math.round(tx.oldestPendingAgeMs) / 1000,
      nonce_gap: tx.nonceGap,
      ready_max_seconds: deps.config.TX_PENDING_READY_MAX_MS / 1000,
    };
    const indexLag = {
      chain_head: lag.chainHead ?? null,
      indexed_block: lag.indexedBlock ?? null,
      lag_blocks: lag.lagBlocks ?? null,
      lag_seconds: lag.lagSeconds === undefined ? null : Math.round(lag.lagSeconds * 1000) / 1000,
      ready_max_seconds: maxLag,
    };
    if (failed.length > 0) {
      const unavailable = serviceUnavailable(`Not ready: ${failed.join(", ")}.`);
      throw new ApiError("service_unavailable", {
        message: unavailable.message,
        details: {
          ...unavailable.details,
          index_lag_seconds: indexLag.lag_seconds,
          index_lag_blocks: indexLag.lag_blocks,
          tx_oldest_pending_seconds: transactions.oldest_pending_seconds,
          tx_nonce_gap: transactions.nonce_gap,
        },
        headers: unavailable.headers,
      });
    }
    res.json({ status: "ready", index: indexLag, transactions });
  },
};

async function check(probe: () => Promise<unknown>): Promise<boolean> {
  try {
    await probe();
    return true;
  } catch {
    return false;
  }
}
