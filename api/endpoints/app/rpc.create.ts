import { z } from "zod";
import type { GatewayDeps } from "../../deps.js";
import { ApiError } from "../../errors/ApiError.js";
import type { Endpoint } from "../endpoint.js";

/** What the browser needs: reads, gas estimates, and sending transactions it signed itself. */
const ALLOWED_METHODS = new Set([
  "eth_chainId",
  "eth_blockNumber",
  "eth_call",
  "eth_estimateGas",
  "eth_gasPrice",
  "eth_maxPriorityFeePerGas",
  "eth_feeHistory",
  "eth_getBalance",
  "eth_getBlockByNumber",
  "eth_getBlockByHash",
  "eth_getCode",
  "eth_getLogs",
  "eth_getTransactionByHash",
  "eth_getTransactionReceipt",
  "eth_getTransactionCount",
  "eth_sendRawTransaction",
  "net_version",
]);

const rpcRequest = z.object({
  jsonrpc: z.literal("2.0"),
  id: z.union([z.number(), z.string(), z.null()]).optional(),
  method: z.string(),
  params: z.array(z.unknown()).optional(),
});
const rpcBody = z.union([rpcRequest, z.array(rpcRequest).min(1).max(20)]);

/**
 * `POST /app/rpc`: the chain's JSON-RPC on the app's own origin, so the browser needs no CORS from the node (a
 * local Hardhat node has no public RPC). Only the allowed methods pass; anything else is refused. Mounted only
 * without a public RPC URL (APP_RPC_URL).
 */
export const createRpcCall: Endpoint<Pick<GatewayDeps, "config">> = {
  method: "post",
  path: "/app/rpc",
  access: "webApp",
  enabledFor: (deps) => !deps.config.APP_RPC_URL,
  handler: (deps) => async (req, res) => {
    const rpcUrl = deps.config.RPC_URL;
    const parsed = rpcBody.safeParse(req.body);
    if (!parsed.success) throw new ApiError("invalid_request", { message: "Not a JSON-RPC request." });
    const calls = Array.isArray(parsed.data) ? parsed.data : [parsed.data];
    const refused = calls.find((call) => !ALLOWED_METHODS.has(call.method));
    if (refused) throw new ApiError("invalid_request", { message: `RPC method ${refused.method} is not available.` });
    const upstream = await fetch(rpcUrl, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(parsed.data),
    }).catch(() => {
      throw new ApiError("service_unavailable", { message: "The chain's RPC cannot be reached." });
    });
    res
      .status(upstream.status)
      .type("application/json")
      .send(await upstream.text());
  },
};
