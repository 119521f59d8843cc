// A whole local stack on the gateway's development ports (8690-8698) with its own state folder, for poking the
// gateway by hand while developing it: `npx tsx test/api/devStack/devStack.ts` (Ctrl-C stops everything). Then
// `npx vitest run --config test/api/devStack/vitest.config.ts [test/api/<file>.test.ts]` runs the API suite against it.
import path from "node:path";
import { repoRoot } from "../../../scripts/stack/repoRoot.js";
import { startLocalStack, stackPorts } from "../../../scripts/stack/startLocalStack.js";

const base = Number(process.env.API_DEV_PORT_BASE ?? 8690);
const stack = await startLocalStack({
  stateDir: path.join(repoRoot, ".local", "api-dev"),
  ports: stackPorts(base),
  gatewayEnv: {
    JOB_TIMEOUT_MS: process.env.JOB_TIMEOUT_MS ?? "8000",
    LOG_LEVEL: "debug",
    ...(process.env.RATE_LIMIT_MAX ? { RATE_LIMIT_MAX: process.env.RATE_LIMIT_MAX } : {}),
  },
  compile: process.env.COMPILE !== "0",
  onProgress: (message) => console.log(`[stack] ${message}`),
});
console.log(
  JSON.stringify(
    {
      apiUrl: stack.apiUrl,
      rpcUrl: stack.rpcUrl,
      indexerUrl: stack.indexerUrl,
      demo: stack.demo,
      workers: stack.workers,
    },
    null,
    2,
  ),
);
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    void stack.stop().then(() => process.exit(0));
  });
}
