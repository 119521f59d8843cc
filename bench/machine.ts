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
