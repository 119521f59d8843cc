import { Router } from "express";
import { creditsToUsdg } from "../../contracts/client/index.js";
import type { GatewayDeps } from "../deps.js";
import { authOf } from "../http/middleware/authenticate.js";
import { NO_QUERY, parseQuery } from "../http/parseQuery.js";

function isoOf(seconds: bigint | null | undefined): string | null {
  return seconds == null || seconds === 0n ? null : new Date(Number(seconds) * 1000).toISOString();
}

/** GET /v1/account (spec): the key's wallet and its available credits. */
export function accountRouter(deps: GatewayDeps): Router {
  const router = Router();
  router.get("/v1/account", async (req, res) => {
    const auth = authOf(res);
    parseQuery(req, NO_QUERY);
    const [indexed, available, key] = await Promise.all([
      deps.index.accountOf(auth.wallet),
      // The chain's balance: the index may not have seen the last settlement yet.
      deps.chain.availableCredits(auth.wallet),
      deps.chain.keyOf(auth.wallet),
    ]);
    const credits = Number(available);
    res.setHeader("x-service-credits-remaining", String(credits));
    res.json({
      wallet: auth.wallet,
      credits_remaining: credits,
      usdg_value: creditsToUsdg(credits),
      last_topup_at: isoOf(indexed?.lastTopUpAt),
      api_key_created_at: isoOf(
        key.keyHash.toLowerCase() === auth.keyHash.toLowerCase() ? key.createdAt : indexed?.keyCreatedAt,
      ),
    });
  });
  return router;
}
