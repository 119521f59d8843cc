import { readFileSync, readdirSync, readlinkSync } from "node:fs";

/**
 * Process figures from /proc (Linux): which process listens on a port, its CPU time and its memory. The bench
 * uses them to say where the limit sits (CPU of which process) and how much memory each process holds.
 */

const CLOCK_TICKS_PER_SECOND = 100;

/** Inodes of the sockets listening on `port` (IPv4 and IPv6). */
function listeningInodes(port: number): Set<string> {
  const inodes = new Set<string>();
  for (const file of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    let text = "";
    try {
      text = readFileSync(file, "utf8");
    } catch {
      continue;
    }
    for (const line of text.split("\n").slice(1)) {
      const fields = line.trim().split(/\s+/);
      if (fields.length < 10) continue;
      const localPort = parseInt(fields[1]!.split(":")[1]!, 16);
      // State 0A is LISTEN.
      if (localPort === port && fields[3] === "0A") inodes.add(fields[9]!);
    }
  }
  return inodes;
}

/** The process listening on `port`, if this user can see it. */
export function pidOfPort(port: number): number | undefined {
  const inodes = listeningInodes(port);
  if (inodes.size === 0) return undefined;
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${entry}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      try {
        const target = readlinkSync(`/proc/${entry}/fd/${fd}`);
        const match = /^socket:\[(\d+)\]$/.exec(target);
        if (match && inodes.has(match[1]!)) return Number(entry);
      } catch {
        // The fd closed meanwhile.
      }
    }
  }
  return undefined;
}

/** Direct children of `pid` (e.g. Postgres backends under the postmaster). */
export function childrenOf(pid: number): number[] {
  const children: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (Number(fields[1]) === pid) children.push(Number(entry));
    } catch {
      // Gone.
    }
  }
  return children;
}

/** User + system CPU seconds the process has used so far (0 when it is gone). */
export function cpuSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    // Fields 14 and 15 of stat (utime, stime) are at 11 and 12 after the command.
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_SECOND;
  } catch {
    return 0;
  }
}

/** Resident set size now and its peak (VmHWM), in MB. */
export function memoryMb(pid: number): { rssMb: number; peakMb: number } | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const kb = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? 0);
    return { rssMb: kb("VmRSS") / 1024, peakMb: kb("VmHWM") / 1024 };
  } catch {
    return undefined;
  }
}

/** A group of processes watched together (a service and its children), CPU summed. */
export interface Watched {
  name: string;
  pids: () => number[];
}

/** CPU use of each watched group over a window, as a share of one core (1.0 = one core busy). */
export function cpuMeter(groups: Watched[]): () => Record<string, number> {
  const total = (group: Watched) => group.pids().reduce((sum, pid) => sum + cpuSeconds(pid), 0);
  const start = new Map(groups.map((group) => [group.name, total(group)]));
  const startedAt = performance.now();
  return () => {
    const seconds = (performance.now() - startedAt) / 1000;
    const result: Record<string, number> = {};
    for (const group of groups) result[group.name] = (total(group) - start.get(group.name)!) / seconds;
    return result;
  };
}
