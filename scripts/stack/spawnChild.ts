import { spawn, type ChildProcess } from "node:child_process";
import { createWriteStream } from "node:fs";

export type ChildHandle = {
  child: ChildProcess;
  /** The leader's pid, which is also its process group id (signal `-pid` to reach the whole group). */
  pid: number;
  /** True until the process exits. */
  isAlive: () => boolean;
  /** SIGINT to the whole process group, SIGKILL after `graceMs`; resolves once the leader has exited. */
  stop: (graceMs?: number) => Promise<void>;
};

export type SpawnChildOptions = {
  command: string;
  args: string[];
  cwd: string;
  env?: NodeJS.ProcessEnv;
  /** Output of the child is appended here; when absent it is discarded. */
  logFile?: string;
  /** Also echo the child's output to ours. */
  echo?: boolean;
};

const liveGroups = new Set<number>();
let exitHookInstalled = false;

// A test runner or `npm start` that dies must not leave a node, database or indexer behind:
// every child runs in its own process group and is killed with its group when we exit.
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once("exit", () => {
    for (const pgid of liveGroups) killGroup(pgid, "SIGKILL");
  });
}

function killGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch {
    // Already gone.
  }
}

/** Spawns a long-running child in its own process group (so npx → node → workers all stop together). */
export function spawnChild(options: SpawnChildOptions): ChildHandle {
  installExitHook();
  const child = spawn(options.command, options.args, {
    cwd: options.cwd,
    env: options.env ?? process.env,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
  });
  const pid = child.pid;
  if (pid === undefined) throw new Error(`failed to spawn ${options.command}`);
  liveGroups.add(pid);

  let alive = true;
  const exited = new Promise<void>((resolve) => {
    child.once("exit", () => {
      alive = false;
      resolve();
    });
  });
  child.once("error", () => {
    alive = false;
  });

  const log = options.logFile ? createWriteStream(options.logFile, { flags: "a" }) : undefined;
  for (const stream of [child.stdout, child.stderr]) {
    stream?.on("data", (chunk: Buffer) => {
      log?.write(chunk);
      if (options.echo) process.stderr.write(chunk);
    });
  }

  const stop = async (graceMs = 5_000): Promise<void> => {
    if (alive) {
      killGroup(pid, "SIGINT");
      const timer = setTimeout(() => killGroup(pid, "SIGKILL"), graceMs);
      await exited;
      clearTimeout(timer);
    }
    // Grandchildren that ignored SIGINT must not outlive their leader.
    killGroup(pid, "SIGKILL");
    liveGroups.delete(pid);
    log?.end();
  };

  return { child, pid, isAlive: () => alive, stop };
}
