import { issueNonce } from "../../app/nonceStore.js";
import type { GatewayDeps } from "../../deps.js";
import type { Endpoint } from "../endpoint.js";

/** `POST /app/siwe/nonce`: a fresh Sign-In with Ethereum nonce (APP_NONCE_TTL_S). */
export const createSiweNonce: Endpoint<Pick<GatewayDeps, "config" | "pool">> = {
  method: "post",
  path: "/app/siwe/nonce",
  access: "webApp",
  handler: (deps) => async (_req, res) => {
    const { nonce, expiresAt } = await issueNonce(deps.pool, deps.config.APP_NONCE_TTL_S);
    res.setHeader("cache-control", "no-store");
    res.json({ object: "siwe_nonce", nonce, expires_at: expiresAt.toISOString() });
  },
};
