import { z } from "zod";
import { sessionWallet } from "../../app/sessionWallet.js";
import type { GatewayDeps } from "../../deps.js";
import { ApiError } from "../../errors/ApiError.js";
import type { Endpoint } from "../endpoint.js";

/**
 * What the explorer page (/tx/<hash>, public by design) reads: one transaction, its receipt and block. Each
 * answer is about one transaction, so its size is bounded by the chain's own limits.
 */
const PUBLIC_METHODS = new Set([
  "eth_chainId",
  "eth_getTransactionByHash",
  "eth_getTransactionReceipt",
  "eth_getBlockByNumber",
  "eth_getBlockByHash",
]);
/**
 * What the signed-in web app uses besides: contract reads (`readContract`), waiting for receipts, and the dev
 * wallet sending transactions it signed itself (nonce, fees, gas, raw send). No log queries: an `eth_getLogs`
 * from block 0 was megabytes per call (issue 23 item 7).
 */
const SESSION_METHODS = new Set([
  ...PUBLIC_METHODS,
  "eth_blockNumber",
  "eth_call",
  "eth_estimateGas",
  "eth_gasPrice",
  "eth_maxPriorityFeePerGas",
  "eth_feeHistory",
  "eth_getBalance",
  "eth_getTransactionCount",
  "eth_sendRawTransaction",
]);
/** The most an answer may weigh; a larger one is refused rather than buffered. */
export const RPC_ANSWER_MAX_BYTES = 256 * 1024;

const rpcRequest = z.object({
  jsonrpc: z.literal("2.0"),
  id: z.union([z.number(), z.string(), z.null()]).optional(),
  method: z.string(),
  params: z.array(z.unknown()).optional(),
});
const rpcBody = z.union([rpcRequest, z.array(rpcRequest).min(1).max(10)]);

/**
 * `POST /app/rpc`: the chain's JSON-RPC on the app's own origin, so the browser needs no CORS from the node (a
 * local Hardhat node has no public RPC). A signed-in session may use the methods the web app uses; without one
 * only the explorer page's by-hash reads pass. Blocks are asked without their transactions' bodies; answers are
 * read up to RPC_ANSWER_MAX_BYTES within RPC_TIMEOUT_MS, never buffered beyond. Mounted only without a public
 * RPC URL (APP_RPC_URL).
 */
export const createRpcCall: Endpoint<Pick<GatewayDeps, "config" | "resolveWallet">> = {
  method: "post",
  path: "/app/rpc",
  access: "webApp",
  enabledFor: (deps) => !deps.config.APP_RPC_URL,
  handler: (deps) => async (req, res) => {
    const parsed = rpcBody.safeParse(req.body);
    if (!parsed.success) throw new ApiError("invalid_request", { message: "Not a JSON-RPC request." });
    const calls = Array.isArray(parsed.data) ? parsed.data : [parsed.data];
    const unknown = calls.find((call) => !SESSION_METHODS.has(call.method));
    if (unknown) throw new ApiError("invalid_request", { message: `RPC method ${unknown.method} is not available.` });
    // 401 app_session_required for anything beyond the explorer's reads without a session.
    if (calls.some((call) => !PUBLIC_METHODS.has(call.method))) await sessionWallet(deps, req);
    for (const call of calls) {
      // Block headers only: a block's full transactions are not what the app reads.
      if ((call.method === "eth_getBlockByNumber" || call.method === "eth_getBlockByHash") && call.params)
        call.params = [call.params[0], false];
    }
    const answer = await boundedRpcCall(deps.config.RPC_URL, JSON.stringify(parsed.data), deps.config.RPC_TIMEOUT_MS);
    res.status(answer.status).type("application/json").send(answer.body);
  },
};

async function boundedRpcCall(url: string, body: string, timeoutMs: number): Promise<{ status: number; body: Buffer }> {
  const unreachable = () => new ApiError("service_unavailable", { message: "The chain's RPC cannot be reached." });
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), timeoutMs);
  try {
    const upstream = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body,
      signal: controller.signal,
    }).catch(() => {
      throw unreachable();
    });
    const chunks: Buffer[] = [];
    let size = 0;
    const reader = upstream.body?.getReader();
    for (;;) {
      const next = await reader?.read().catch(() => {
        throw unreachable();
      });
      if (!next || next.done) break;
      size += next.value.byteLength;
      if (size > RPC_ANSWER_MAX_BYTES) {
        controller.abort();
        throw new ApiError("invalid_request", {
          message: `The RPC answer exceeds ${RPC_ANSWER_MAX_BYTES} bytes; ask for less (fewer calls per batch).`,
        });
      }
      chunks.push(Buffer.from(next.value));
    }
    return { status: upstream.status, body: Buffer.concat(chunks) };
  } finally {
    clearTimeout(timer);
  }
}
