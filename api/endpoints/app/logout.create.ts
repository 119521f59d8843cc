import { clearSessionCookie, sessionTokenOf } from "../../app/sessionCookie.js";
import { endSession } from "../../app/sessionStore.js";
import type { GatewayDeps } from "../../deps.js";
import type { Endpoint } from "../endpoint.js";

/** `POST /app/logout`: ends the session, if any, and clears its cookie. */
export const createLogout: Endpoint<Pick<GatewayDeps, "pool">> = {
  method: "post",
  path: "/app/logout",
  access: "webApp",
  handler: (deps) => async (req, res) => {
    const token = sessionTokenOf(req);
    if (token) await endSession(deps.pool, token);
    clearSessionCookie(req, res);
    res.json({ object: "session", signed_out: true });
  },
};
