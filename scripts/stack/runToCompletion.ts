import { readFileSync, rmSync } from "node:fs";
import { repoRoot } from "./repoRoot.js";
import { spawnChild } from "./spawnChild.js";

/** Runs a one-shot command (compile, deploy) as a child and fails with its log's tail if it exits non-zero. */
export async function runToCompletion(
  what: string,
  command: string,
  args: string[],
  options: { logFile: string; echo: boolean },
): Promise<void> {
  rmSync(options.logFile, { force: true });
  const handle = spawnChild({ command, args, cwd: repoRoot, logFile: options.logFile, echo: options.echo });
  const code = await new Promise<number | null>((resolve) => {
    if (!handle.isAlive()) resolve(handle.child.exitCode);
    handle.child.once("exit", (exitCode) => resolve(exitCode));
  });
  await handle.stop();
  if (code !== 0) {
    const tail = readFileTail(options.logFile);
    throw new Error(`${what} failed (exit ${code}); ${options.logFile}:\n${tail}`);
  }
}

function readFileTail(file: string, lines = 30): string {
  try {
    return readFileSync(file, "utf8").trimEnd().split("\n").slice(-lines).join("\n");
  } catch {
    return "(no output)";
  }
}
