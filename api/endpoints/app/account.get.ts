import { KEY_STATUSES, apiKeyRegistryAbi, creditEscrowAbi, creditsToUsdg } from "@credit-metered/client";
import { signedInAddress } from "../../app/webAppContext.js";
import type { GatewayDeps } from "../../deps.js";
import type { Endpoint } from "../endpoint.js";

/** `GET /app/account`: the signed-in wallet's credits (locked too) and key status, from the chain. */
export const getAppAccount: Endpoint<Pick<GatewayDeps, "deployment" | "appPublicClient" | "resolveWallet">> = {
  method: "get",
  path: "/app/account",
  access: "webApp",
  handler: (deps) => async (req, res) => {
    const wallet = await signedInAddress(deps, req);
    const [account, key] = await Promise.all([
      deps.appPublicClient.readContract({
        address: deps.deployment.contracts.creditEscrow,
        abi: creditEscrowAbi,
        functionName: "accountOf",
        args: [wallet],
      }),
      deps.appPublicClient.readContract({
        address: deps.deployment.contracts.apiKeyRegistry,
        abi: apiKeyRegistryAbi,
        functionName: "keyOf",
        args: [wallet],
      }),
    ]);
    const available = Number(account.available);
    const locked = Number(account.locked);
    const [keyHash, keyStatus, keyCreatedAt] = key;
    res.setHeader("cache-control", "no-store");
    res.json({
      object: "app_account",
      wallet: wallet.toLowerCase(),
      credits_available: available,
      usdg_value: creditsToUsdg(available),
      credits_locked: locked,
      locked_usdg_value: creditsToUsdg(locked),
      last_topup_at: account.lastTopUpAt === 0n ? null : new Date(Number(account.lastTopUpAt) * 1000).toISOString(),
      key: {
        status: KEY_STATUSES[keyStatus] ?? "none",
        key_hash: keyStatus === 0 ? null : keyHash,
        created_at: keyCreatedAt === 0n ? null : new Date(Number(keyCreatedAt) * 1000).toISOString(),
      },
    });
  },
};
