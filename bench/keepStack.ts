import { writeFileSync } from "node:fs";
import { preloadStatementStats } from "./dbStats.js";
import { obtainStack, BENCH_PORT_BASE, BENCH_STATE_DIR } from "./obtainStack.js";
import { startRpcCounter } from "./rpcCounter.js";
import { seedWallets } from "./wallets.js";
import { stackPorts } from "../scripts/stack/startLocalStack.js";

/**
 * Starts the bench's stack and keeps it up (Ctrl-C stops it): for profiling against the same settings.
 * `BENCH_WALLETS` (16) client wallets are seeded into `.local/bench/wallets.json` for `bench/load.ts`.
 * `BENCH_COUNT_RPC=1` sends the gateway's chain calls through a counting pass-through (`GET
 * http://127.0.0.1:<8860+18>/counts`), for counting them per job. `BENCH_CHAIN_BLOCK_TIME=<seconds>` makes the chain
 * mine a block every so many seconds instead of automining (the bench's second chain mode). `BENCH_GATEWAYS=2` runs a
 * second gateway that idles, as in the bench's levels: `bench/load.ts` sends to the first one only.
 */
const chainBlockTime = Number(process.env.BENCH_CHAIN_BLOCK_TIME ?? 0);
const counter =
  process.env.BENCH_COUNT_RPC === "1"
    ? await startRpcCounter(`http://127.0.0.1:${BENCH_PORT_BASE}`, BENCH_PORT_BASE + 18)
    : undefined;
// As `bench/run.ts` does, so that `bench/load.ts` can name the costliest statements.
await preloadStatementStats(BENCH_STATE_DIR, stackPorts(BENCH_PORT_BASE).postgres);
const stack = await obtainStack((message) => console.error(message), {
  ...(counter ? { gatewayRpcUrl: counter.url } : {}),
  ...(chainBlockTime > 0 ? { chainBlockTime } : {}),
  gateways: Number(process.env.BENCH_GATEWAYS ?? 1),
});
const first = stack.info.gateways[0];
const served = first && stack.info.gateways.length > 1 ? { ...stack.info, apiUrl: first.apiUrl } : stack.info;
writeFileSync(".local/bench/stack.json", `${JSON.stringify(served, null, 2)}\n`);
const wallets = await seedWallets(stack.info, [stack.info.apiUrl], Number(process.env.BENCH_WALLETS ?? 16), 2_000n);
writeFileSync(".local/bench/wallets.json", `${JSON.stringify(wallets, null, 2)}\n`);
console.error(
  `bench stack up; .local/bench/stack.json and wallets.json written${counter ? `; chain calls counted at ${counter.url}/counts` : ""}`,
);
for (const signal of ["SIGINT", "SIGTERM"] as const)
  process.once(signal, () => {
    void stack
      .stop()
      .then(() => counter?.stop())
      .then(() => process.exit(0));
  });
