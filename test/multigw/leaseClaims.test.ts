import pg from "pg";
import { pino } from "pino";
import { keccak256, toBytes, type Hex } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { jobIdToBytes32, newJobId } from "@credit-metered/client";
import { createPool } from "../../api/db/createPool.js";
import { migrate } from "../../api/db/migrate.js";
import { GatewayLeases } from "../../api/jobs/gatewayLeases.js";
import { JobStore } from "../../api/jobs/jobStore.js";
import { stackInfo } from "../support/stackInfo.js";

// The lease table and the take-over claim (api/jobs/gatewayLeases.ts) on the stack's real PostgreSQL, in a schema of
// their own so the running gateways never see these rows.

const SCHEMA = "multigw_lease_claims";
const silent = pino({ level: "silent" });
const pools: pg.Pool[] = [];

function poolAs(gatewayId: string): pg.Pool {
  const pool = createPool(stackInfo().databaseUrl, SCHEMA, 4, gatewayId);
  pools.push(pool);
  return pool;
}

function leasesOf(pool: pg.Pool, gatewayId: string): GatewayLeases {
  return new GatewayLeases(pool, {
    gatewayId,
    signer: "0x0000000000000000000000000000000000000001",
    ttlMs: 60_000,
    heartbeatMs: 1_000,
    logger: silent,
  });
}

async function insertJobs(pool: pg.Pool, count: number): Promise<string[]> {
  const store = new JobStore(pool);
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const jobId = newJobId(Date.now());
    await store.insert({
      jobId,
      jobKey: jobIdToBytes32(jobId),
      wallet: "0x00000000000000000000000000000000000000aa",
      keyHash: keccak256(toBytes(`key-${jobId}`)) as Hex,
      model: "qwen3-1.7b",
      tier: "lite",
      stream: false,
      maxTokens: 8,
      creditsLocked: 2,
      promptTokens: 5,
    });
    ids.push(jobId);
  }
  return ids;
}

let admin: pg.Pool;

beforeAll(async () => {
  admin = new pg.Pool({ connectionString: stackInfo().databaseUrl, max: 2 });
  await admin.query(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`);
  await migrate(poolAs("setup"), SCHEMA);
});

afterAll(async () => {
  await Promise.all(pools.map((pool) => pool.end()));
  await admin.query(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`);
  await admin.end();
});

describe("gateway leases on one database", () => {
  it("a job row names the gateway whose connection wrote it, without the insert naming it", async () => {
    const [jobId] = await insertJobs(poolAs("gw-writer"), 1);
    const { rows } = await admin.query<{ gateway_id: string | null }>(
      `SELECT gateway_id FROM ${SCHEMA}.gateway_job WHERE job_id = $1`,
      [jobId],
    );
    expect(rows[0]?.gateway_id).toBe("gw-writer");
  });

  it("two live gateways claiming at once take each open job of a dead gateway exactly once, and nothing else", async () => {
    const deadPool = poolAs("gw-dead");
    const livePool = poolAs("gw-live");
    const dead = leasesOf(deadPool, "gw-dead");
    const live = leasesOf(livePool, "gw-live");
    await dead.renew();
    await live.renew();
    const orphans = await insertJobs(deadPool, 120);
    const finished = await insertJobs(deadPool, 10);
    await admin.query(`UPDATE ${SCHEMA}.gateway_job SET status = 'settled' WHERE job_id = ANY($1)`, [finished]);
    const othersLive = await insertJobs(livePool, 10);
    // gw-dead stops renewing: its lease runs out.
    await admin.query(
      `UPDATE ${SCHEMA}.gateway_lease SET expires_at = now() - interval '1 second' WHERE gateway_id = $1`,
      ["gw-dead"],
    );

    const a = leasesOf(poolAs("gw-a"), "gw-a");
    const b = leasesOf(poolAs("gw-b"), "gw-b");
    await a.renew();
    await b.renew();
    const rounds = await Promise.all([
      ...Array.from({ length: 4 }, () => a.claimOrphans()),
      ...Array.from({ length: 4 }, () => b.claimOrphans()),
    ]);
    const claimed = rounds.flat().map((row) => row.job_id);
    expect(claimed.length).toBe(orphans.length);
    expect(new Set(claimed).size).toBe(orphans.length);
    expect(new Set(claimed)).toEqual(new Set(orphans));
    expect(rounds.flat().every((row) => row.previous_owner === "gw-dead")).toBe(true);

    const { rows } = await admin.query<{ gateway_id: string; n: string }>(
      `SELECT gateway_id, count(*) AS n FROM ${SCHEMA}.gateway_job WHERE job_id = ANY($1) GROUP BY gateway_id`,
      [[...orphans, ...finished, ...othersLive]],
    );
    const owners = Object.fromEntries(rows.map((row) => [row.gateway_id, Number(row.n)]));
    // A final job stays where it was; a live gateway's jobs stay its own.
    expect(owners["gw-dead"]).toBe(finished.length);
    expect(owners["gw-live"]).toBe(othersLive.length);
    expect((owners["gw-a"] ?? 0) + (owners["gw-b"] ?? 0)).toBe(orphans.length);
  });

  it("a gateway closes only its own jobs or unowned ones", () => {
    const leases = leasesOf(admin, "gw-self");
    expect(leases.mayClose({ job_id: "j1", gateway_id: "gw-self" })).toBe(true);
    expect(leases.mayClose({ job_id: "j2", gateway_id: null })).toBe(true);
    expect(leases.mayClose({ job_id: "j3", gateway_id: "gw-other" })).toBe(false);
  });

  it("a released lease counts as expired at once, and renewing takes it back", async () => {
    const pool = poolAs("gw-release");
    const leases = leasesOf(pool, "gw-release");
    await leases.renew();
    await leases.stop({ release: true });
    const expired = await admin.query<{ expired: boolean }>(
      `SELECT expires_at <= now() AS expired FROM ${SCHEMA}.gateway_lease WHERE gateway_id = 'gw-release'`,
    );
    expect(expired.rows[0]?.expired).toBe(true);
    await leases.renew();
    const renewed = await admin.query<{ expired: boolean; released: boolean }>(
      `SELECT expires_at <= now() AS expired, released_at IS NOT NULL AS released
       FROM ${SCHEMA}.gateway_lease WHERE gateway_id = 'gw-release'`,
    );
    expect(renewed.rows[0]).toEqual({ expired: false, released: false });
  });
});
