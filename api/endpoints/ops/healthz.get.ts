import type { Endpoint } from "../endpoint.js";

/** `GET /healthz`: the process answers. No key needed. */
export const getHealthz: Endpoint<unknown> = {
  method: "get",
  path: "/healthz",
  access: "open",
  handler: () => (_req, res) => {
    res.json({ status: "ok" });
  },
};
