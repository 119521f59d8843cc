import { readFileSync } from "node:fs";

/**
 * `npx tsx bench/summarizeProfile.ts <file.cpuprofile> [fromµs toµs] [top]`: a V8 CPU profile summed by self time
 * per function and by inclusive time per module (a package of node_modules, a file of the project, Node's own
 * `node:` modules, or V8's pseudo-frames such as `(garbage collector)`). With a window (CLOCK_MONOTONIC µs, as
 * `bench/load.ts` prints it) only the samples inside it count.
 */
type Frame = { functionName: string; url: string; lineNumber: number };
type Node = { id: number; callFrame: Frame; children?: number[] };
type Profile = { nodes: Node[]; startTime: number; endTime: number; samples: number[]; timeDeltas: number[] };

const [file, from, to, topArg] = process.argv.slice(2);
if (!file) throw new Error("usage: summarizeProfile.ts <file.cpuprofile> [fromµs toµs] [top]");
const profile = JSON.parse(readFileSync(file, "utf8")) as Profile;
const top = Number(topArg ?? 15);
const byId = new Map(profile.nodes.map((node) => [node.id, node]));
const parent = new Map<number, number>();
for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);

function moduleOf(frame: Frame): string {
  const url = frame.url;
  if (!url) return frame.functionName.startsWith("(") ? frame.functionName : "(native)";
  const nm = url.lastIndexOf("node_modules/");
  if (nm >= 0) {
    const rest = url.slice(nm + "node_modules/".length).split("/");
    return rest[0]!.startsWith("@") ? `${rest[0]}/${rest[1]}` : rest[0]!;
  }
  if (url.startsWith("node:")) return url;
  const project = /\/(api|indexer|packages|scripts|shared)\/(.*)$/.exec(url);
  return project ? `${project[1]}/${project[2]}` : url;
}
const label = (frame: Frame) =>
  `${frame.functionName || "(anonymous)"} ${moduleOf(frame)}${frame.url ? `:${frame.lineNumber + 1}` : ""}`;

const self = new Map<string, number>();
// Inclusive time per function whose label contains BENCH_PROFILE_FUNCTIONS (e.g. `api/`).
const functionsOf = process.env.BENCH_PROFILE_FUNCTIONS;
const functionInclusive = new Map<string, number>();
const inclusive = new Map<string, number>();
let total = 0;
let idle = 0;
let time = profile.startTime;
const lo = from ? Number(from) : -Infinity;
const hi = to ? Number(to) : Infinity;
for (let i = 0; i < profile.samples.length; i++) {
  time += profile.timeDeltas[i]!;
  // A sample's weight is the time until the next one.
  const weight = (profile.timeDeltas[i + 1] ?? 0) / 1000;
  if (time < lo || time > hi) continue;
  const leaf = byId.get(profile.samples[i]!)!;
  if (leaf.callFrame.functionName === "(idle)") {
    idle += weight;
    continue;
  }
  total += weight;
  self.set(label(leaf.callFrame), (self.get(label(leaf.callFrame)) ?? 0) + weight);
  const seen = new Set<string>();
  const seenFunctions = new Set<string>();
  for (let id: number | undefined = leaf.id; id !== undefined; id = parent.get(id)) {
    const frame = byId.get(id)!.callFrame;
    if (functionsOf && !seenFunctions.has(label(frame)) && label(frame).includes(functionsOf)) {
      seenFunctions.add(label(frame));
      functionInclusive.set(label(frame), (functionInclusive.get(label(frame)) ?? 0) + weight);
    }
    const module = moduleOf(frame);
    if (module === "(root)" || seen.has(module)) continue;
    seen.add(module);
    inclusive.set(module, (inclusive.get(module) ?? 0) + weight);
  }
}
const row = ([name, ms]: [string, number]) =>
  `${ms.toFixed(0).padStart(7)} ms ${((100 * ms) / total).toFixed(1).padStart(5)}%  ${name}`;
console.log(`busy ${total.toFixed(0)} ms, idle ${idle.toFixed(0)} ms`);
console.log(`\ntop ${top} by self time:`);
for (const entry of [...self].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(row(entry));
console.log(`\nby module, inclusive:`);
for (const entry of [...inclusive].sort((a, b) => b[1] - a[1]).slice(0, top * 2)) console.log(row(entry));
if (functionsOf) {
  console.log(`\nfunctions matching ${functionsOf}, inclusive:`);
  for (const entry of [...functionInclusive].sort((a, b) => b[1] - a[1]).slice(0, top * 2)) console.log(row(entry));
}

// BENCH_PROFILE_CALLERS=<text>: where the self time of functions whose label contains <text> comes from (the
// nearest frames above it that are not Node's or V8's own), for finding who pays for e.g. `writev` or `keccakP`.
const callersOf = process.env.BENCH_PROFILE_CALLERS;
if (callersOf) {
  const depth = Number(process.env.BENCH_PROFILE_CALLER_DEPTH ?? 4);
  const paths = new Map<string, number>();
  let t = profile.startTime;
  for (let i = 0; i < profile.samples.length; i++) {
    t += profile.timeDeltas[i]!;
    const weight = (profile.timeDeltas[i + 1] ?? 0) / 1000;
    if (t < lo || t > hi) continue;
    const leaf = byId.get(profile.samples[i]!)!;
    if (!label(leaf.callFrame).includes(callersOf)) continue;
    const chain: string[] = [];
    for (let id = parent.get(leaf.id); id !== undefined && chain.length < depth; id = parent.get(id)) {
      const frame = byId.get(id)!.callFrame;
      if (!frame.url || frame.url.startsWith("node:")) continue;
      chain.push(label(frame));
    }
    const key = chain.join(" < ");
    paths.set(key, (paths.get(key) ?? 0) + weight);
  }
  console.log(`\ncallers of ${callersOf}:`);
  for (const entry of [...paths].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(row(entry));
}
