import { sessionTokenOf } from "../../app/sessionCookie.js";
import { findSession } from "../../app/sessionStore.js";
import type { GatewayDeps } from "../../deps.js";
import { ApiError } from "../../errors/ApiError.js";
import type { Endpoint } from "../endpoint.js";

/** `GET /app/me`: the session (wallet, chain, expiry); none → 401 `app_session_required`. */
export const getMe: Endpoint<Pick<GatewayDeps, "pool" | "deployment">> = {
  method: "get",
  path: "/app/me",
  access: "webApp",
  handler: (deps) => async (req, res) => {
    const token = sessionTokenOf(req);
    const session = token ? await findSession(deps.pool, token) : undefined;
    if (!session || session.chainId !== deps.deployment.chainId) throw new ApiError("app_session_required");
    res.json({
      object: "session",
      wallet: session.wallet,
      chain_id: session.chainId,
      expires_at: session.expiresAt.toISOString(),
    });
  },
};
