import { CREDITS_PER_USDG, MIN_DEPOSIT } from "@credit-metered/client";
import { SUGGESTED_DEPOSIT_USDG, appOriginOf, devModeOf } from "../../app/webAppContext.js";
import type { GatewayDeps } from "../../deps.js";
import type { Endpoint } from "../endpoint.js";

/** `GET /app/config`: what the web app needs to start: chain, contracts, models, fees, URLs, dev mode. */
export const getAppConfig: Endpoint<Pick<GatewayDeps, "config" | "deployment">> = {
  method: "get",
  path: "/app/config",
  access: "webApp",
  handler: (deps) => {
    const devMode = devModeOf(deps);
    return (_req, res) => {
      const { origin } = appOriginOf(deps.config);
      res.json({
        object: "app_config",
        chain_id: deps.deployment.chainId,
        // Without a public RPC URL the browser goes through this origin (api/endpoints/app/rpc.create.ts).
        rpc_url: deps.config.APP_RPC_URL ?? "/app/rpc",
        contracts: deps.deployment.contracts,
        treasury: deps.deployment.roles.treasury,
        models: deps.deployment.models.map(({ id, key }) => ({ id, key })),
        fee_bps: deps.deployment.params.feeBps,
        dispute_window_s: deps.deployment.params.disputeWindow,
        dev_mode: devMode,
        api_url: `${deps.config.PUBLIC_BASE_URL}/v1`,
        // `{explorer_url}`: a real explorer where there is one; locally this app's own /tx page.
        explorer_url: deps.config.EXPLORER_URL ?? `${origin}/tx`,
        min_deposit_usdg: Number(MIN_DEPOSIT) / 1_000_000,
        suggested_deposit_usdg: SUGGESTED_DEPOSIT_USDG,
        credits_per_usdg: CREDITS_PER_USDG,
      });
    };
  },
};
