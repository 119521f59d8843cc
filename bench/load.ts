import { readFileSync } from "node:fs";
import type { StackInfo } from "../scripts/stack/startLocalStack.js";
import { gatewayComplete } from "./clients.js";

/** `npx tsx bench/load.ts [clients] [seconds]`: closed-loop whole completions against `.local/bench/stack.json`. */
const info = JSON.parse(readFileSync(".local/bench/stack.json", "utf8")) as StackInfo;
const clients = Number(process.argv[2] ?? 50);
const seconds = Number(process.argv[3] ?? 15);
const models = [...new Set(info.workers.flatMap((worker) => worker.models))];
const until = performance.now() + seconds * 1000;
let done = 0;
await Promise.all(
  Array.from({ length: clients }, async (_, client) => {
    for (let round = 0; performance.now() < until; round++) {
      const result = await gatewayComplete(
        info.apiUrl,
        info.demo.apiKey,
        models[(client + round) % models.length]!,
        16,
      );
      if (result.status === 200) done++;
    }
  }),
);
console.log(`${done} completions in ${seconds} s: ${(done / seconds).toFixed(1)}/s`);
