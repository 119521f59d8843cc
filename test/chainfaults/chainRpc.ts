import { CHAIN_JOB_STATUSES, jobIdToBytes32 } from "@credit-metered/client";
import { contracts, creditEscrowAbi, publicClient } from "../support/chain.js";
import { stackInfo } from "../support/stackInfo.js";

/** A raw JSON-RPC call to the suite's node (the fault injections: base fee, drops, snapshots, mining). */
export async function rpc(method: string, params: unknown[] = []): Promise<unknown> {
  const response = await fetch(stackInfo().rpcUrl, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
    signal: AbortSignal.timeout(10_000),
  });
  const body = (await response.json()) as { result?: unknown; error?: { message?: string } };
  if (body.error) throw new Error(`${method}: ${body.error.message}`);
  return body.result;
}

/** A job's status in the escrow as the chain now stands (`none` when it was never locked there). */
export async function chainStatusOf(jobId: string): Promise<string> {
  const [status] = await publicClient().readContract({
    address: contracts().creditEscrow,
    abi: creditEscrowAbi,
    functionName: "jobOf",
    args: [jobIdToBytes32(jobId)],
  });
  return CHAIN_JOB_STATUSES[status] ?? "none";
}
