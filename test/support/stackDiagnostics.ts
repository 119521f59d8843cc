import { readFileSync } from "node:fs";
import path from "node:path";
import { stackInfo } from "./stackInfo.js";

/**
 * What a stack looked like when a wait on it gave up: the gateway's `/readyz` (index lag, index availability,
 * pending transactions), the indexer's own status (the block it has indexed) and the warnings the gateway's and the
 * indexer's logs end with. A wait that fails on a loaded CI host names which of them held it, so the failure is
 * diagnosed from the CI log alone.
 */
async function stackDiagnostics(...context: string[]): Promise<string> {
  const info = stackInfo();
  return [
    ...context,
    `/readyz: ${await answerOf(`${info.apiUrl}/readyz`)}`,
    `indexer /status: ${await answerOf(`${info.indexerUrl}/status`)}`,
    `gateway log, last warnings:\n${lastLines(path.join(info.stateDir, "logs", "gateway.log"), 15, (line) => /"level":(4|5|6)0/.test(line))}`,
    `indexer log, last lines:\n${lastLines(path.join(info.stateDir, "logs", "indexer.log"), 25, () => true)}`,
  ].join("\n");
}

/** Runs `wait`; when it throws, rethrows with the stack's diagnostics appended (and `context()` first). */
export async function diagnosed<T>(wait: () => Promise<T>, context: () => string[] = () => []): Promise<T> {
  try {
    return await wait();
  } catch (error) {
    throw new Error(`${(error as Error).message}\n${await stackDiagnostics(...context())}`, { cause: error });
  }
}

async function answerOf(url: string): Promise<string> {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(5_000) });
    return `${response.status} ${(await response.text()).slice(0, 600)}`;
  } catch (error) {
    return `no answer (${(error as Error).message})`;
  }
}

function lastLines(file: string, count: number, keep: (line: string) => boolean): string {
  try {
    return readFileSync(file, "utf8")
      .split("\n")
      .filter((line) => line.length > 0 && keep(line))
      .slice(-count)
      .map((line) => `  ${line.slice(0, 400)}`)
      .join("\n");
  } catch (error) {
    return `  (unreadable: ${(error as Error).message})`;
  }
}
