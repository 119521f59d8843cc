import type { Account } from "@credit-metered/client/http";
import type { Hex } from "viem";
import { creditsToUsdg } from "@credit-metered/client";
import type { GatewayDeps } from "../../deps.js";
import { serviceUnavailable } from "../../errors/dependencyOutage.js";
import { authOf } from "../../http/middleware/authenticate.js";
import { NO_QUERY, parseQuery } from "../../http/parseQuery.js";
import { IndexUnavailableError } from "../../readModel/indexClient.js";
import type { IndexedAccount } from "../../readModel/indexReader.js";
import { LastKnown } from "../../readModel/lastKnown.js";
import { markStale } from "../../readModel/staleness.js";
import { withDeadline } from "../../runtime/withDeadline.js";
import type { Endpoint } from "../endpoint.js";
import { accountSchema } from "@credit-metered/client/http";
import { STALE_HEADER } from "../../readModel/staleness.js";

function isoOf(seconds: bigint | null | undefined): string | null {
  return seconds == null || seconds === 0n ? null : new Date(Number(seconds) * 1000).toISOString();
}

/**
 * `GET /v1/account` (spec): the key's wallet and its available credits. The balance and key come from the chain
 * (the index may not have seen the last settlement); top-up time from the index. When one of them does not
 * answer, the other fills in (the index's balance, the last account row read) and `x-service-stale-seconds` says
 * how old the answer may be; when the index gives nothing (not even a last row read), the last answer of this
 * endpoint for the key does; with nothing to answer from, 503 `service_unavailable`.
 */
export const getAccount: Endpoint<GatewayDeps> = {
  method: "get",
  path: "/v1/account",
  access: "apiKey",
  openapi: {
    operationId: "getAccount",
    summary: "The key's wallet and its credits",
    tag: "Account",
    response: {
      status: 200,
      description: "The account.",
      body: accountSchema,
      headers: ["x-service-credits-remaining", STALE_HEADER],
    },
    errors: [],
  },
  handler: (deps) => {
    // What this endpoint last answered per key (credits from the chain, top-up time from the index): the last known
    // state when the index does not answer and never gave this wallet's row (a wallet whose first reads the chain
    // answered before the index had it), instead of a 503.
    const lastAnswers = new LastKnown<Hex, Account>();
    return async (req, res) => {
      const auth = authOf(res);
      parseQuery(req, NO_QUERY);
      const staleMaxMs = deps.config.INDEX_STALE_MAX_MS;
      const [indexedRead, chainRead] = await Promise.all([
        deps.index.accountOf(auth.wallet).then(
          (row) => ({ row, ageSeconds: deps.indexLag.snapshot().lagSeconds ?? 0 }),
          (error: unknown) => {
            if (!(error instanceof IndexUnavailableError)) throw error;
            const known = deps.index.lastKnownAccount(auth.wallet, staleMaxMs);
            return known ? { row: known.row as IndexedAccount | undefined, ageSeconds: known.ageMs / 1000 } : undefined;
          },
        ),
        readChain(deps, auth.wallet),
      ]);
      if (!indexedRead) {
        const last = lastAnswers.recall(auth.keyHash, staleMaxMs);
        if (!last) throw serviceUnavailable("The account cannot be read from the index right now. Retry shortly.");
        const credits = chainRead ? Number(chainRead.available) : last.value.credits_remaining;
        markStale(res, Math.max(last.ageMs / 1000, 1));
        res.setHeader("x-service-credits-remaining", String(credits));
        res.json({ ...last.value, credits_remaining: credits, usdg_value: creditsToUsdg(credits) } satisfies Account);
        return;
      }
      const indexed = indexedRead.row;
      markStale(res, indexedRead.ageSeconds);
      let credits: number;
      if (chainRead) {
        credits = Number(chainRead.available);
      } else {
        // The chain did not answer: the balance as indexed is the last known one.
        credits = Number(indexed?.creditsAvailable ?? 0n);
        markStale(res, Math.max(indexedRead.ageSeconds, 1));
      }
      const keyCreatedAt =
        chainRead && chainRead.key.keyHash.toLowerCase() === auth.keyHash.toLowerCase()
          ? chainRead.key.createdAt
          : indexed?.keyCreatedAt;
      const account: Account = {
        wallet: auth.wallet,
        credits_remaining: credits,
        usdg_value: creditsToUsdg(credits),
        last_topup_at: isoOf(indexed?.lastTopUpAt),
        api_key_created_at: isoOf(keyCreatedAt),
      };
      lastAnswers.remember(auth.keyHash, account);
      res.setHeader("x-service-credits-remaining", String(credits));
      res.json(account);
    };
  },
};

/** Balance and key from the chain, or undefined when it is known to be down or does not answer in time. */
async function readChain(deps: GatewayDeps, wallet: Hex) {
  const lag = deps.indexLag.snapshot();
  if (lag.sampledAt > 0 && !lag.chainUp) return undefined;
  try {
    const [available, key] = await withDeadline(
      Promise.all([deps.chain.availableCredits(wallet), deps.chain.keyOf(wallet)]),
      deps.config.READY_CHECK_TIMEOUT_MS,
      "account from the chain",
    );
    return { available, key };
  } catch {
    return undefined;
  }
}
