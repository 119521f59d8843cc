// The web application's backend: /app/* (session, account, jobs, webhooks views) and the built app at `/`.
import type { Router } from "express";
import type { GatewayDeps } from "../deps.js";
import { listedModelResources } from "../routes/models.js";
import { appWebhooksRouter } from "../webhooks/index.js";
import { appPublicClient, appRouter } from "./appRouter.js";
import { loadAppSettings } from "./appSettings.js";
import { rpcProxy } from "./rpcProxy.js";
import { serveWeb } from "./serveWeb.js";

export { appRouter, appPublicClient, LOCAL_CHAIN_ID, SUGGESTED_DEPOSIT_USDG } from "./appRouter.js";
export { loadAppSettings, type AppSettings } from "./appSettings.js";

/** Every router of the web app, in mounting order (mount after `/v1`). */
export function appRouters(deps: GatewayDeps): Router[] {
  const settings = loadAppSettings();
  const publicClient = appPublicClient(deps.config, deps.deployment);
  const app = appRouter({
    config: deps.config,
    settings,
    pool: deps.pool,
    deployment: deps.deployment,
    publicClient,
    listModels: () => listedModelResources(deps),
  });
  const routers = [app.router, appWebhooksRouter({ pool: deps.pool, resolveWallet: app.resolveWallet })];
  if (!settings.APP_RPC_URL) routers.push(rpcProxy(deps.config.RPC_URL));
  if (settings.WEB_DIST_DIR) routers.push(serveWeb(settings.WEB_DIST_DIR));
  return routers;
}
