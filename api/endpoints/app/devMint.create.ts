import { z } from "zod";
import { mintTestStablecoin } from "../../app/mintTestStablecoin.js";
import { devModeOf, signedInAddress } from "../../app/webAppContext.js";
import type { GatewayDeps } from "../../deps.js";
import { parseOrThrow } from "../../http/validate.js";
import type { Endpoint } from "../endpoint.js";

const mintBody = z.object({ usdg: z.number().int().min(1).max(10_000) });

/**
 * `POST /app/dev/mint`, local chain in dev mode only: test stablecoin for the signed-in wallet, so the Fund page
 * can be tried end to end.
 */
export const createDevMint: Endpoint<Pick<GatewayDeps, "config" | "deployment" | "appPublicClient" | "resolveWallet">> =
  {
    method: "post",
    path: "/app/dev/mint",
    access: "webApp",
    enabledFor: devModeOf,
    handler: (deps) => async (req, res) => {
      const wallet = await signedInAddress(deps, req);
      const body = parseOrThrow(mintBody, req.body ?? {});
      const tx = await mintTestStablecoin(
        { rpcUrl: deps.config.RPC_URL, deployment: deps.deployment, publicClient: deps.appPublicClient },
        wallet,
        BigInt(body.usdg) * 1_000_000n,
      );
      res.json({ object: "mint", wallet: wallet.toLowerCase(), usdg: body.usdg, tx });
    },
  };
