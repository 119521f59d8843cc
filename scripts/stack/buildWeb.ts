import { createHash, randomBytes } from "node:crypto";
import {
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  realpathSync,
  renameSync,
  rmSync,
  statSync,
  utimesSync,
} from "node:fs";
import path from "node:path";
import { repoRoot } from "./repoRoot.js";
import { runToCompletion } from "./runToCompletion.js";

/** Finished builds, one folder per input hash; `*.tmp-*` folders are builds in progress. */
export const WEB_BUILD_CACHE_DIR = path.join(repoRoot, ".local", "web-build-cache");
/** Changes whenever the build's command or what the hash covers changes, so older entries stop matching. */
const RECIPE = "vite build --config web/vite.config.ts, v1";
/** A finished build unused for this long goes (other branches' builds are kept a while). */
const UNUSED_ENTRY_MS = 24 * 60 * 60 * 1000;
/** A build in progress this old was abandoned (a killed run). */
const ABANDONED_TMP_MS = 60 * 60 * 1000;

/** `none`: there is no web app; `failed`: the build failed (the caller reports it and starts without the app). */
export type WebBuild = { status: "built" | "cached" | "none" } | { status: "failed"; error: Error };

/**
 * The web app (`web/`, served by the gateway at `/`) into `webDistDir`, from a cache keyed on the build's inputs:
 * every test suite's stack serves the same app, and building it (vite) was a quarter of a stack's start.
 */
export async function buildWeb(webDistDir: string, logFile: string, echo: boolean): Promise<WebBuild> {
  rmSync(webDistDir, { recursive: true, force: true });
  if (!existsSync(path.join(repoRoot, "web/index.html"))) return { status: "none" };
  try {
    const entry = path.join(WEB_BUILD_CACHE_DIR, webBuildKey());
    const cached = existsSync(path.join(entry, "index.html"));
    if (!cached) await buildInto(entry, logFile, echo);
    // A copy, not a link: pruning the cache later must not pull the app from under a running gateway.
    cpSync(entry, webDistDir, { recursive: true });
    const now = new Date();
    utimesSync(entry, now, now);
    pruneCache(entry);
    return { status: cached ? "cached" : "built" };
  } catch (error) {
    return { status: "failed", error: error instanceof Error ? error : new Error(String(error)) };
  }
}

/**
 * Builds into a folder of its own, then renames it to `entry` in one step: suites run two at a time in CI and may
 * build the same entry at once; a half-written entry must never be visible, and the loser of the race keeps the
 * winner's (identical) build.
 */
async function buildInto(entry: string, logFile: string, echo: boolean): Promise<void> {
  mkdirSync(WEB_BUILD_CACHE_DIR, { recursive: true });
  const tmp = `${entry}.tmp-${process.pid}-${randomBytes(4).toString("hex")}`;
  try {
    await runToCompletion(
      "web build",
      path.join(repoRoot, "node_modules/.bin/vite"),
      ["build", "--config", "web/vite.config.ts", "--outDir", tmp, "--emptyOutDir", "--logLevel", "warn"],
      { logFile, echo },
    );
    try {
      renameSync(tmp, entry);
    } catch (error) {
      if (!existsSync(path.join(entry, "index.html"))) throw error;
    }
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

/**
 * Hash of what the build reads: the app (`web/`, its config and `.env` files included), the workspace package it
 * imports (@credit-metered/client, wherever node_modules links it), the installed dependencies (lock files) and the
 * TypeScript settings esbuild takes from the closest tsconfig.json.
 */
export function webBuildKey(): string {
  const hash = createHash("sha256").update(RECIPE);
  const clientDir = realpathSync(path.join(repoRoot, "node_modules/@credit-metered/client"));
  const inputs = [
    ...filesUnder(path.join(repoRoot, "web")),
    ...filesUnder(clientDir),
    ...["package.json", "package-lock.json", "tsconfig.json", "node_modules/.package-lock.json"].map((file) =>
      path.join(repoRoot, file),
    ),
    path.join(clientDir, "../../tsconfig.json"),
  ];
  for (const file of inputs) {
    hash.update(`\0${file}\0`);
    hash.update(existsSync(file) ? readFileSync(file) : "(none)");
  }
  return hash.digest("hex").slice(0, 32);
}

/** Files below `dir` in a stable order, without build output and installed packages. */
function filesUnder(dir: string): string[] {
  const files: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
    if (entry.name === "node_modules" || entry.name === "dist") continue;
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) files.push(...filesUnder(full));
    else if (entry.isFile()) files.push(full);
  }
  return files;
}

/** Drops entries unused for a day and builds abandoned for an hour; never `keep`. Best effort. */
function pruneCache(keep: string): void {
  const now = Date.now();
  for (const name of readdirSync(WEB_BUILD_CACHE_DIR)) {
    const full = path.join(WEB_BUILD_CACHE_DIR, name);
    if (full === keep) continue;
    try {
      const age = now - statSync(full).mtimeMs;
      if (age > (name.includes(".tmp-") ? ABANDONED_TMP_MS : UNUSED_ENTRY_MS)) {
        rmSync(full, { recursive: true, force: true });
      }
    } catch {
      // Another stack removed it first.
    }
  }
}
