import { z } from "zod";
import { setSessionCookie } from "../../app/sessionCookie.js";
import { createSession } from "../../app/sessionStore.js";
import { verifySignIn } from "../../app/verifySignIn.js";
import { appOriginOf } from "../../app/webAppContext.js";
import type { GatewayDeps } from "../../deps.js";
import { parseOrThrow } from "../../http/validate.js";
import type { Endpoint } from "../endpoint.js";

const loginBody = z.object({ message: z.string().min(1).max(4096), signature: z.string().min(1).max(4096) });

/** `POST /app/siwe/login`: a signed Sign-In with Ethereum message opens a session (cookie, APP_SESSION_TTL_S). */
export const createSiweLogin: Endpoint<Pick<GatewayDeps, "config" | "pool" | "deployment" | "appPublicClient">> = {
  method: "post",
  path: "/app/siwe/login",
  access: "webApp",
  handler: (deps) => async (req, res) => {
    const body = parseOrThrow(loginBody, req.body ?? {});
    const { domain, origin } = appOriginOf(deps.config);
    const wallet = await verifySignIn({ pool: deps.pool, publicClient: deps.appPublicClient }, body, {
      domain,
      origin,
      chainId: deps.deployment.chainId,
    });
    const session = await createSession(deps.pool, {
      wallet,
      chainId: deps.deployment.chainId,
      ttlSeconds: deps.config.APP_SESSION_TTL_S,
    });
    setSessionCookie(req, res, session.token, session.expiresAt);
    res.json({ object: "session", wallet: wallet.toLowerCase(), expires_at: session.expiresAt.toISOString() });
  },
};
