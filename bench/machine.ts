import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import os from "node:os";

/** The machine the figures come from: core count, CPU model, memory, OS and Node versions. */
export function describeMachine() {
  const cpuinfo = readFileSync("/proc/cpuinfo", "utf8");
  const cpuModel = /^model name\s*:\s*(.+)$/m.exec(cpuinfo)?.[1]?.trim() ?? os.cpus()[0]?.model ?? "unknown";
  return {
    cpus: os.availableParallelism(),
    cpuModel,
    memoryGb: Math.round((os.totalmem() / 1024 ** 3) * 10) / 10,
    os: `${os.type()} ${os.release()} ${os.arch()}`,
    node: process.versions.node,
  };
}

/**
 * The tree the figures come from: its commit, and whether files other than the bench's own results differed from
 * it (figures of a dirty tree are not that commit's).
 */
export function describeSource(): { commit: string; dirty: boolean } | null {
  try {
    const git = (...args: string[]) => execFileSync("git", args, { encoding: "utf8", timeout: 10_000 }).trim();
    const commit = git("rev-parse", "--short=12", "HEAD");
    const dirty = git("status", "--porcelain", "--", ".", ":(exclude)bench/results") !== "";
    return { commit, dirty };
  } catch {
    return null; // not a git checkout (an unpacked archive)
  }
}
