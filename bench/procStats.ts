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

/** pid → parent pid of every process this user can see, read from /proc in one pass. */
function parentsByPid(): Map<number, number> {
  const parents = new Map<number, number>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      parents.set(Number(entry), Number(fields[1]));
    } catch {
      // Gone.
    }
  }
  return parents;
}

/** Direct children of `pid` (e.g. Postgres backends under the postmaster). */
export function childrenOf(pid: number): number[] {
  return [...parentsByPid()].filter(([, parent]) => parent === pid).map(([child]) => child);
}

/**
 * `pid` and every descendant (a service's whole process tree: tsx's launcher and the node process it runs, the
 * postmaster and each backend, Hardhat's node and its helpers).
 */
export function processTree(pid: number): number[] {
  const parents = parentsByPid();
  const tree = new Set([pid]);
  // Repeat until no new descendant is found (a pass may meet a child before its parent joined the tree).
  for (let grew = true; grew; ) {
    grew = false;
    for (const [child, parent] of parents)
      if (!tree.has(child) && tree.has(parent)) {
        tree.add(child);
        grew = true;
      }
  }
  return [...tree].filter((member) => member === pid || parents.has(member));
}

/**
 * User + system CPU seconds the process has used so far, with what its reaped children used (cutime, cstime), so a
 * tree's sum keeps the time of a child that exited during a window (0 when the process is gone).
 */
export function cpuSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    // Fields 14–17 of stat (utime, stime, cutime, cstime) are at 11–14 after the command.
    return (Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14])) / CLOCK_TICKS_PER_SECOND;
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

/** CPU seconds each watched group has used so far (its processes looked up now). */
export function cpuTotals(groups: Watched[]): Record<string, number> {
  return Object.fromEntries(
    groups.map((group) => [group.name, group.pids().reduce((sum, pid) => sum + cpuSeconds(pid), 0)]),
  );
}

/**
 * CPU use of each watched group since the meter was made: `cores()` as a share of one core over the elapsed time
 * (1.0 = one core busy), `seconds()` as CPU seconds.
 */
export function cpuMeter(groups: Watched[]): {
  cores: () => Record<string, number>;
  seconds: () => Record<string, number>;
} {
  const start = cpuTotals(groups);
  const startedAt = performance.now();
  const seconds = () => {
    const now = cpuTotals(groups);
    return Object.fromEntries(groups.map((group) => [group.name, now[group.name]! - start[group.name]!]));
  };
  return {
    seconds,
    cores: () => {
      const elapsed = (performance.now() - startedAt) / 1000;
      return Object.fromEntries(Object.entries(seconds()).map(([name, value]) => [name, value / elapsed]));
    },
  };
}
