import path from "node:path";
import { assertPortFree } from "./ports.js";
import { repoRoot } from "./repoRoot.js";
import { spawnChild } from "./spawnChild.js";
import { waitFor } from "./waitFor.js";

export type StartChainOptions = {
  port: number;
  /** Where the node's output goes (appended); discarded when absent. */
  logFile?: string;
  echo?: boolean;
  readyTimeoutMs?: number;
  /** Chain id of the node (default Hardhat's 31337); another one stands in for a public chain in tests. */
  chainId?: number;
  /**
   * Keep the node's log of every call and transaction, which `hardhat node` switches on (default: the
   * `CHAIN_CALL_LOG=1` environment variable). Off, the log file keeps only the node's start-up output: writing a
   * line per JSON-RPC call, and a decoded account of every transaction, is node CPU spent on each job.
   */
  callLog?: boolean;
};

export type RunningChain = {
  rpcUrl: string;
  /** The same node over WebSocket (Hardhat serves both on one port). */
  wsUrl: string;
  chainId: number;
  /** Process group of the node (fault-injection tests signal it: SIGSTOP/SIGCONT). */
  pid: number;
  stop: () => Promise<void>;
};

/**
 * EDR, the engine behind `hardhat node`, records a trace of every EVM step of every transaction (its
 * `TracingInspector`; Hardhat offers no switch for it) in memory from mimalloc, which by default hands freed pages
 * back to the kernel after 10 ms; the next transaction faults them in again as fresh transparent huge pages, each
 * zeroed whole. `perf` on the node's `edr-provider` thread under `bench/load.ts 100 8 whole` on the 1 s chain: half
 * of its samples zeroed pages (`clear_page_erms` under `do_huge_pmd_anonymous_page`), most of the rest was the
 * tracer's copies. Never handing pages back (`MIMALLOC_PURGE_DELAY=-1`, read by mimalloc at start-up) took the node
 * from 4.34 / 3.81 / 3.66 ms of CPU per job (three runs in a row) to 2.55 / 1.83 / 1.74, and the stack from 92 / 124
 * / 148 to 131 / 176 / 212 completions/s; the node's RSS after the runs was 630 MB against 790 MB. A local chain
 * lives for one session, so its memory is not handed back. An explicit `MIMALLOC_PURGE_DELAY` in the environment
 * wins.
 */
const NODE_ALLOCATOR_ENV = { MIMALLOC_PURGE_DELAY: "-1" };

/** Starts `hardhat node` (chain 31337 unless told, Hardhat's default accounts) and waits until it answers. */
export async function startChain(options: StartChainOptions): Promise<RunningChain> {
  await assertPortFree(options.port, "hardhat node");
  const rpcUrl = `http://127.0.0.1:${options.port}`;
  const handle = spawnChild({
    command: path.join(repoRoot, "node_modules/.bin/hardhat"),
    args: [
      "node",
      "--hostname",
      "127.0.0.1",
      "--port",
      String(options.port),
      ...(options.chainId ? ["--chain-id", String(options.chainId)] : []),
    ],
    cwd: repoRoot,
    env: { ...NODE_ALLOCATOR_ENV, ...process.env },
    ...(options.logFile ? { logFile: options.logFile } : {}),
    ...(options.echo ? { echo: options.echo } : {}),
  });
  let chainId = 0;
  try {
    await waitFor(
      "hardhat node",
      async () => {
        chainId = await rpcChainId(rpcUrl);
        return true;
      },
      { timeoutMs: options.readyTimeoutMs ?? 60_000, isAlive: handle.isAlive },
    );
    if (!(options.callLog ?? process.env.CHAIN_CALL_LOG === "1"))
      await rpc(rpcUrl, "hardhat_setLoggingEnabled", [false]);
  } catch (error) {
    await handle.stop();
    throw error;
  }
  return { rpcUrl, wsUrl: `ws://127.0.0.1:${options.port}`, chainId, pid: handle.pid, stop: () => handle.stop() };
}

/**
 * Switches the node from automine (a block per transaction, at once) to interval mining: one block every
 * `seconds`, as on an L2 with real block times (docs/DESIGN.md, "A chain with block times"). Transactions wait in
 * the mempool until the next block. Hardhat's node (EDR) and anvil both answer these two calls.
 */
export async function setIntervalMining(rpcUrl: string, seconds: number): Promise<void> {
  await rpc(rpcUrl, "evm_setAutomine", [false]);
  await rpc(rpcUrl, "evm_setIntervalMining", [Math.round(seconds * 1000)]);
}

async function rpc(rpcUrl: string, method: string, params: unknown[]): Promise<unknown> {
  const response = await fetch(rpcUrl, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
    signal: AbortSignal.timeout(10_000),
  });
  const body = (await response.json()) as { result?: unknown; error?: { message?: string } };
  if (body.error) throw new Error(`${method}: ${body.error.message ?? "failed"}`);
  return body.result;
}

async function rpcChainId(rpcUrl: string): Promise<number> {
  const result = await rpc(rpcUrl, "eth_chainId", []);
  if (typeof result !== "string") throw new Error("no chain id");
  return Number.parseInt(result, 16);
}
