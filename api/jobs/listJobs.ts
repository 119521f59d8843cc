import type { JobList } from "@credit-metered/client/http";
import type { Hex } from "viem";
import { IndexUnavailableError } from "../readModel/indexClient.js";
import type { IndexedJob } from "../readModel/indexReader.js";
import type { GatewayJobRow } from "./jobStore.js";
import { indexUnavailableSeconds, type JobReadDeps } from "./loadJob.js";
import { toJobResource, type JobResource, type JobState } from "./toJobResource.js";

export interface ListJobsQuery {
  limit: number;
  before?: string;
  after?: string;
  status?: JobState;
  model?: string;
}

export type JobPage = JobList;

export interface ListedJobs {
  page: JobPage;
  /** How old the chain facts shown may be, in seconds (index lag, or how long the index has not answered). */
  staleSeconds: number;
}

const SCAN_CHUNK = 100;

/**
 * GET /v1/jobs: newest first. Without `after` the page walks back in time from `before` (or now) and
 * `next_cursor` is the `before` of the next, older page. With `after` it returns the jobs just newer than the
 * cursor (still newest first) and `next_cursor` is the `after` of the next, newer page.
 *
 * Jobs come from two sorted sources (the index, and the gateway's rows not yet indexed); a status filter needs
 * both, so the scan merges chunks of each up to the point where both are complete. While the index does not
 * answer, the page comes from the gateway's rows (every job a gateway opened has one) with the last indexed row
 * read for each, and `staleSeconds` says so.
 */
export async function listJobs(deps: JobReadDeps, keyHash: Hex, query: ListJobsQuery): Promise<ListedJobs> {
  let staleSeconds = deps.indexLag.snapshot().lagSeconds ?? 0;
  const order: "asc" | "desc" = query.after ? "asc" : "desc";
  const matches: JobResource[] = [];
  let cursor = order === "desc" ? query.before : query.after;
  const bound = order === "desc" ? undefined : query.before;
  for (;;) {
    const range = order === "desc" ? { before: cursor } : { after: cursor, before: bound };
    const options = { ...range, ...(query.model ? { model: query.model } : {}), limit: SCAN_CHUNK, order };
    const [local, fromIndex] = await Promise.all([
      deps.jobs.listForKey(keyHash, options),
      deps.index.jobsForKey(keyHash, options).catch((error: unknown) => {
        if (error instanceof IndexUnavailableError) return undefined;
        throw error;
      }),
    ]);
    let indexed = fromIndex;
    if (indexed === undefined) {
      let oldestMs = 0;
      indexed = [];
      for (const row of local) {
        const known = deps.index.lastKnownJob(row.job_id, deps.config.INDEX_STALE_MAX_MS);
        if (!known) continue;
        indexed.push(known.row);
        oldestMs = Math.max(oldestMs, known.ageMs);
      }
      staleSeconds = Math.max(staleSeconds, indexUnavailableSeconds(deps, oldestMs));
    }
    const { merged, cutoff, exhausted } = mergeChunk(local, indexed, order);
    for (const { indexedRow, localRow } of merged) {
      const resource = toJobResource(indexedRow, localRow, deps.chain.escrowAddress);
      if (!query.status || resource.status === query.status) matches.push(resource);
      if (matches.length > query.limit) break;
    }
    if (matches.length > query.limit || exhausted || cutoff === undefined) break;
    cursor = cutoff;
  }
  const hasMore = matches.length > query.limit;
  const page = matches.slice(0, query.limit);
  const last = page[page.length - 1];
  const data = order === "desc" ? page : page.reverse();
  return {
    page: { object: "list", data, has_more: hasMore, next_cursor: hasMore && last ? last.id : null },
    staleSeconds,
  };
}

interface Pair {
  id: string;
  indexedRow: IndexedJob | undefined;
  localRow: GatewayJobRow | undefined;
}

/** Merges two sorted chunks; only ids up to the first unfinished source's last id are complete in both. */
function mergeChunk(local: GatewayJobRow[], indexed: IndexedJob[], order: "asc" | "desc") {
  const localFull = local.length === SCAN_CHUNK;
  const indexedFull = indexed.length === SCAN_CHUNK;
  const ends = [
    localFull ? local[local.length - 1]!.job_id : undefined,
    indexedFull ? indexed[indexed.length - 1]!.id : undefined,
  ].filter((value): value is string => value !== undefined);
  const beyond = (a: string, b: string) => (order === "desc" ? a < b : a > b);
  const cutoff = ends.length === 0 ? undefined : ends.reduce((a, b) => (beyond(a, b) ? b : a));
  const pairs = new Map<string, Pair>();
  for (const row of indexed) pairs.set(row.id, { id: row.id, indexedRow: row, localRow: undefined });
  for (const row of local) {
    const pair = pairs.get(row.job_id);
    if (pair) pair.localRow = row;
    else pairs.set(row.job_id, { id: row.job_id, indexedRow: undefined, localRow: row });
  }
  const merged = [...pairs.values()]
    .filter((pair) => cutoff === undefined || !beyond(pair.id, cutoff))
    .sort((a, b) => (order === "desc" ? (a.id < b.id ? 1 : -1) : a.id < b.id ? -1 : 1));
  return { merged, cutoff, exhausted: !localFull && !indexedFull };
}
