// Every HTTP endpoint of the gateway, one file each (method + path), registered from this one list by the
// composition root (api/main.ts). Order matters only where paths overlap and for the methods a 405 `Allow` header
// lists (read from the mounted routes in this order).
import type { GatewayDeps } from "../deps.js";
import { getActivity } from "./app/activity.get.js";
import { getAppAccount } from "./app/account.get.js";
import { getAppConfig } from "./app/config.get.js";
import { createDevMint } from "./app/devMint.create.js";
import { listAppJobs } from "./app/jobs.list.js";
import { createLogout } from "./app/logout.create.js";
import { getMe } from "./app/me.get.js";
import { listAppModels } from "./app/models.list.js";
import { createRpcCall } from "./app/rpc.create.js";
import { createSiweLogin } from "./app/siweLogin.create.js";
import { createSiweNonce } from "./app/siweNonce.create.js";
import type { Endpoint, EndpointAccess } from "./endpoint.js";
import { getHealthz } from "./ops/healthz.get.js";
import { getMetrics } from "./ops/metrics.get.js";
import { getReadyz } from "./ops/readyz.get.js";
import { getAccount } from "./v1/account.get.js";
import { createChatCompletion } from "./v1/chatCompletions.create.js";
import { disputeJobEndpoint } from "./v1/jobs.dispute.js";
import { getJob } from "./v1/jobs.get.js";
import { listJobsEndpoint } from "./v1/jobs.list.js";
import { getModel } from "./v1/models.get.js";
import { listModels } from "./v1/models.list.js";
import { getOpenapi } from "./v1/openapi.get.js";
import { createResponse } from "./v1/responses.create.js";
import { APP_WEBHOOK_ENDPOINTS, V1_WEBHOOK_ENDPOINTS } from "./webhookRouters.js";

export { routerOf, type Endpoint, type EndpointAccess } from "./endpoint.js";

/** The gateway's endpoints, in mounting order within each access group (see `Endpoint.access`). */
export const ENDPOINTS: readonly Endpoint<GatewayDeps>[] = [
  // No key: probes, metrics, the API description.
  getHealthz,
  getReadyz,
  getMetrics,
  getOpenapi,
  // The `/v1` API (spec), behind the API key.
  createChatCompletion,
  createResponse,
  listJobsEndpoint,
  getJob,
  disputeJobEndpoint,
  listModels,
  getModel,
  getAccount,
  ...V1_WEBHOOK_ENDPOINTS,
  // The web application's backend (`/app/*`), Sign-In with Ethereum session.
  getAppConfig,
  createSiweNonce,
  createSiweLogin,
  createLogout,
  getMe,
  getAppAccount,
  listAppJobs,
  getActivity,
  listAppModels,
  createDevMint,
  ...APP_WEBHOOK_ENDPOINTS,
  createRpcCall,
];

/** The endpoints of one access group, in list order. */
export function endpointsFor(access: EndpointAccess): Endpoint<GatewayDeps>[] {
  return ENDPOINTS.filter((endpoint) => endpoint.access === access);
}
