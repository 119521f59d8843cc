import { spawn } from "node:child_process";
import path from "node:path";
import { repoRoot } from "../../../scripts/stack/repoRoot.js";
import { stackInfo } from "../../support/stackInfo.js";

export type VerifyRun = { code: number | null; stdout: string; stderr: string };

/** Runs `npm run verify -- …`'s script as its own process against the test stack's chain (RPC + deployments). */
export function runVerify(args: string[]): Promise<VerifyRun> {
  const { rpcUrl, deploymentsFile } = stackInfo();
  const child = spawn(
    path.join(repoRoot, "node_modules/.bin/tsx"),
    ["scripts/verify/cli.ts", ...args, "--rpc-url", rpcUrl, "--deployments", deploymentsFile],
    { cwd: repoRoot, env: { ...process.env, NO_COLOR: "1" } },
  );
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
  return new Promise((resolve) => child.on("close", (code) => resolve({ code, stdout, stderr })));
}
