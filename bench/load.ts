import { readFileSync } from "node:fs";
import type { StackInfo } from "../scripts/stack/startLocalStack.js";
import { gatewayComplete, gatewayStream } from "./clients.js";

/**
 * `npx tsx bench/load.ts [clients] [seconds] [whole|stream]`: closed-loop load against `.local/bench/stack.json`
 * (`bench/keepStack.ts`), for profiling: whole completions over every model, or streams of the bench's latency model
 * (as the closed-loop latency levels send them).
 */
const info = JSON.parse(readFileSync(".local/bench/stack.json", "utf8")) as StackInfo;
const clients = Number(process.argv[2] ?? 50);
const seconds = Number(process.argv[3] ?? 15);
const kind = process.argv[4] ?? "whole";
const models = [...new Set(info.workers.flatMap((worker) => worker.models))];
const until = performance.now() + seconds * 1000;
const ttfts: number[] = [];
let done = 0;
await Promise.all(
  Array.from({ length: clients }, async (_, client) => {
    for (let round = 0; performance.now() < until; round++) {
      const result =
        kind === "stream"
          ? await gatewayStream(info.apiUrl, info.demo.apiKey, process.env.BENCH_MODEL ?? "qwen3-1.7b", 16)
          : await gatewayComplete(info.apiUrl, info.demo.apiKey, models[(client + round) % models.length]!, 16);
      if (result.status === 200) done++;
      if (result.ttftMs !== undefined) ttfts.push(result.ttftMs);
    }
  }),
);
ttfts.sort((a, b) => a - b);
console.log(
  `${done} ${kind === "stream" ? "streams" : "completions"} in ${seconds} s: ${(done / seconds).toFixed(1)}/s` +
    (kind === "stream" ? `, TTFT p50 ${ttfts[Math.floor(ttfts.length / 2)]?.toFixed(1)} ms` : ""),
);
