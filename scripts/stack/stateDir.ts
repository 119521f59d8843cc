import { mkdirSync } from "node:fs";
import path from "node:path";
import { repoRoot } from "./repoRoot.js";

/** `.local/<stack>/` under the repository: the data of one named local stack (database, deployments, logs). */
export function stateDirFor(stack: string): string {
  if (!/^[a-z0-9_-]{1,40}$/i.test(stack)) throw new Error(`invalid stack name: ${stack}`);
  const dir = path.join(repoRoot, ".local", stack);
  mkdirSync(dir, { recursive: true });
  return dir;
}
