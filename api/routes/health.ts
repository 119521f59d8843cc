import { Router } from "express";
import type { GatewayDeps } from "../deps.js";
import { ApiError } from "../errors/ApiError.js";

/** `/healthz`: the process answers. `/readyz`: its database, chain and index answer too. No key needed. */
export function healthRouter(deps: GatewayDeps): Router {
  const router = Router();
  router.get("/healthz", (_req, res) => {
    res.json({ status: "ok" });
  });
  router.get("/readyz", async (_req, res) => {
    const checks = await Promise.all([
      check("database", () => deps.pool.query("SELECT 1")),
      check("chain", () => deps.chain.blockNumber()),
      check("index", () => deps.index.indexedBlock()),
    ]);
    const failed = checks.filter((entry) => !entry.ok).map((entry) => entry.name);
    if (failed.length > 0)
      throw new ApiError("service_unavailable", { message: `Not ready: ${failed.join(", ")} unavailable.` });
    res.json({ status: "ready" });
  });
  return router;
}

async function check(name: string, probe: () => Promise<unknown>): Promise<{ name: string; ok: boolean }> {
  try {
    await probe();
    return { name, ok: true };
  } catch {
    return { name, ok: false };
  }
}
