/**
 * The registry mirror these machines use serves only the packages of this platform, so `npm install` leaves
 * other platforms' optional binaries (edr, rollup, …) out of package-lock.json and `npm ci` then refuses the
 * lock as out of sync. This adds a stub for each missing optional dependency, with `os`/`cpu`/`libc` read from
 * its name, so npm skips it on Linux x64 without fetching anything. Run after any `npm install`:
 * `npx tsx scripts/lockfile/stubForeignPlatformPackages.ts`.
 */
import { readFileSync, writeFileSync } from "node:fs";

interface LockEntry {
  version?: string;
  optional?: boolean;
  dev?: boolean;
  os?: string[];
  cpu?: string[];
  libc?: string[];
  optionalDependencies?: Record<string, string>;
}

interface Lockfile {
  packages: Record<string, LockEntry>;
}

const OS_NAMES = ["darwin", "win32", "android", "freebsd", "openbsd", "openharmony", "linux", "sunos", "aix"];
const CPU_NAMES: [RegExp, string][] = [
  [/(^|-)arm64(-|$)/, "arm64"],
  [/(^|-)x64(-|$)/, "x64"],
  [/(^|-)ia32(-|$)/, "ia32"],
  [/(^|-)loong64(-|$)/, "loong64"],
  [/(^|-)ppc64(-|$)/, "ppc64"],
  [/(^|-)riscv64(-|$)/, "riscv64"],
  [/(^|-)s390x(-|$)/, "s390x"],
  [/(^|-)arm(-|$)/, "arm"],
];

function platformOf(name: string): Pick<LockEntry, "os" | "cpu" | "libc"> | null {
  const base = name.split("/").pop() ?? name;
  const os = OS_NAMES.find((candidate) => base.split("-").includes(candidate));
  const cpu = CPU_NAMES.find(([pattern]) => pattern.test(base))?.[1];
  if (!os || !cpu) return null;
  const libc =
    os === "linux" ? (base.includes("musl") ? ["musl"] : base.includes("gnu") ? ["glibc"] : undefined) : undefined;
  return { os: [os], cpu: [cpu], ...(libc ? { libc } : {}) };
}

const path = new URL("../../package-lock.json", import.meta.url);
const lock = JSON.parse(readFileSync(path, "utf8")) as Lockfile;
const added: string[] = [];
for (const [location, entry] of Object.entries(lock.packages)) {
  for (const [dependency, version] of Object.entries(entry.optionalDependencies ?? {})) {
    const nested = `${location}/node_modules/${dependency}`;
    const hoisted = `node_modules/${dependency}`;
    if (lock.packages[nested] || lock.packages[hoisted]) continue;
    const platform = platformOf(dependency);
    if (!platform) continue;
    lock.packages[hoisted] = { version, ...platform, ...(entry.dev ? { dev: true } : {}), optional: true };
    added.push(`${dependency}@${version}`);
  }
}
const sorted = Object.fromEntries(
  Object.entries(lock.packages).sort(([a], [b]) => (a === "" ? -1 : b === "" ? 1 : a.localeCompare(b))),
);
writeFileSync(path, `${JSON.stringify({ ...lock, packages: sorted }, null, 2)}\n`);
console.log(added.length === 0 ? "lockfile complete" : `stubbed ${added.length}: ${added.join(", ")}`);
