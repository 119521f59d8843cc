import fc from "fast-check";
import type { Address, Hex } from "viem";
import { describe, expect, it } from "vitest";
import type { CreditLedger } from "./creditLedger.js";
import { API_SCHEMA, jobKey, useLedgerDatabase } from "./ledgerTestDatabase.js";

// Two gateways (two ledger instances, each with its own pool, on one database) race random sequences of
// reservations, skipped locks, indexed locks and gateway deaths on one wallet. The model is the chain: `balance` is
// what the wallet can lock, `pending` the reservations whose lock is neither indexed nor released.
const db = useLedgerDatabase(Number(process.env.LEDGER_SLICES_PROPERTY_PG_PORT ?? 10097), "ledger-slices-property");

const WALLET = "0x00000000000000000000000000000000000000c3" as Address;
const SWEEP_MS = 15;
// Longer than the recall wait: a request that needs a peer's credits gets them by asking, not by the peer idling.
const IDLE_MS = 500;

type Step =
  | { kind: "reserve"; requests: { gateway: 0 | 1; credits: number }[] }
  | { kind: "skip"; pick: number }
  | { kind: "index"; pick: number }
  | { kind: "kill"; gateway: 0 | 1 };

const gatewayArb = fc.constantFrom<0 | 1>(0, 1);
const stepArb: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constant("reserve" as const),
      requests: fc.array(fc.record({ gateway: gatewayArb, credits: fc.integer({ min: 1, max: 60 }) }), {
        minLength: 1,
        maxLength: 4,
      }),
    }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("skip" as const), pick: fc.nat() }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("index" as const), pick: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("kill" as const), gateway: gatewayArb }) },
);

interface Gateway {
  ledger: CreditLedger;
  owner: string;
  timer: NodeJS.Timeout;
}

let run = 0;

/** A live gateway: its ledger, swept every SWEEP_MS as main.ts sweeps every LEDGER_SWEEP_MS. */
function startGateway(): Gateway {
  run += 1;
  const owner = `gw-${run}`;
  const ledger = db.gateway({ owner, ttlMs: 60_000, idleMs: IDLE_MS, recallWaitMs: 300 });
  const timer = setInterval(() => void ledger.releaseIndexed().catch(() => undefined), SWEEP_MS);
  return { ledger, owner, timer };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("credit slices across two gateways (property)", () => {
  it("never hold more than the chain allows, lose no credit, and never refuse a request the chain allows", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: 300 }),
        fc.array(stepArb, { minLength: 5, maxLength: 25 }),
        async (initial, steps) => {
          await db.query(
            `TRUNCATE ${API_SCHEMA}.ledger_wallet, ${API_SCHEMA}.ledger_reservation, ${API_SCHEMA}.ledger_slice`,
          );
          await db.query("TRUNCATE index_under_test.job, index_under_test.account");
          await db.indexBalance(WALLET, BigInt(initial));
          let balance = BigInt(initial);
          const pending = new Map<Hex, { gateway: Gateway; credits: bigint }>();
          const gateways: [Gateway, Gateway] = [startGateway(), startGateway()];
          let nextKey = 1;
          const pendingSum = () => [...pending.values()].reduce((sum, entry) => sum + entry.credits, 0n);
          const pick = (n: number) => [...pending.keys()][n % pending.size]!;
          // Indexed locks whose gateway has not learnt they were mined: it may count them until it does.
          const lateReceipts: { gateway: Gateway; key: Hex; credits: bigint }[] = [];
          const lateSum = () => lateReceipts.reduce((sum, late) => sum + late.credits, 0n);
          const index = async (key: Hex) => {
            const entry = pending.get(key)!;
            pending.delete(key);
            await db.indexLock(WALLET, key, entry.credits);
            balance -= entry.credits;
            // The gateway that sent the lock learns it was mined, except (odd figures) when its receipt is late.
            if (entry.credits % 2n === 0n) entry.gateway.ledger.lockMined(key);
            else lateReceipts.push({ gateway: entry.gateway, key, credits: entry.credits });
          };
          try {
            for (const step of steps) {
              if (step.kind === "reserve") {
                // The requests race: two gateways, concurrently.
                const attempts = step.requests.map((request) => ({ ...request, key: jobKey(nextKey++) }));
                // The figure a request is sized with (from the slice's memory when it covers the request) says it
                // fits only when the chain allows it.
                for (const attempt of attempts) {
                  const credits = BigInt(attempt.credits);
                  const said = await gateways[attempt.gateway].ledger.availableFor(WALLET, credits);
                  if (said >= credits)
                    expect(credits, "said to fit though the chain refuses it").toBeLessThanOrEqual(
                      balance - pendingSum(),
                    );
                }
                const results = await Promise.all(
                  attempts.map((attempt) =>
                    gateways[attempt.gateway].ledger.reserve(WALLET, attempt.key, BigInt(attempt.credits)),
                  ),
                );
                attempts.forEach((attempt, i) => {
                  if (results[i]!.ok)
                    pending.set(attempt.key, { gateway: gateways[attempt.gateway], credits: BigInt(attempt.credits) });
                });
                // Room only shrank during the batch: a refused request that fits what is left was refusable
                // at no moment.
                const room = balance - pendingSum();
                attempts.forEach((attempt, i) => {
                  if (!results[i]!.ok)
                    expect(BigInt(attempt.credits), "refused though the chain allows it").toBeGreaterThan(room);
                });
              } else if (step.kind === "skip" && pending.size > 0) {
                const key = pick(step.pick);
                const entry = pending.get(key)!;
                pending.delete(key);
                expect(await entry.gateway.ledger.release([key])).toBe(1);
              } else if (step.kind === "index" && pending.size > 0) {
                await index(pick(step.pick));
              } else if (step.kind === "kill") {
                // The gateway dies: of its locks, those with an even figure were sent and get indexed, the others
                // never left. Its slices' TTL passes, then the live gateway's sweep returns them. The TTL is made to
                // have passed long ago: a renewal the dead gateway's timer sent just before its death may still be
                // in flight, and against an expiry of `now() - 1 ms` a statement that began earlier still sees the
                // row as live and renews it (a row no live gateway returns before its real TTL: seen as "expected
                // 4n to be 0n" below and as false refusals when the tests ran with little CPU to spare).
                const dead = gateways[step.gateway];
                clearInterval(dead.timer);
                for (const [key, entry] of [...pending]) {
                  if (entry.gateway !== dead) continue;
                  if (entry.credits % 2n === 0n) await index(key);
                  else pending.delete(key);
                }
                await db.query(`UPDATE ${API_SCHEMA}.ledger_slice SET expires_at = '-infinity' WHERE owner LIKE $1`, [
                  `${dead.owner}/%`,
                ]);
                gateways[step.gateway] = startGateway();
                await gateways[1 - step.gateway]!.ledger.releaseIndexed();
              }
              // Every reservation still pending would be taken by the chain.
              expect(pendingSum()).toBeLessThanOrEqual(balance);
              // Whatever the ledger holds covers every pending reservation and, once both gateways swept (locks
              // the index shows and their gateway saw mined no longer counted twice), never exceeds what the chain
              // allows but for the locks whose receipts are late.
              await Promise.all(gateways.map((gateway) => gateway.ledger.releaseIndexed()));
              const reserved = await db.reserved(WALLET);
              expect(reserved).toBeGreaterThanOrEqual(pendingSum());
              expect(reserved).toBeLessThanOrEqual(balance + lateSum());
            }
            // Idle: every lock resolved (the late receipts arrived), the slices give everything back. No credit lost.
            for (const [key, entry] of [...pending]) {
              pending.delete(key);
              await entry.gateway.ledger.release([key]);
            }
            for (const { gateway, key } of lateReceipts) gateway.ledger.lockMined(key);
            await sleep(IDLE_MS + 10);
            await Promise.all(gateways.map((gateway) => gateway.ledger.releaseIndexed()));
            expect(await db.reserved(WALLET)).toBe(0n);
            for (const gateway of gateways) expect(await gateway.ledger.available(WALLET)).toBe(balance);
          } finally {
            for (const gateway of gateways) clearInterval(gateway.timer);
          }
        },
      ),
      // endOnFailure: each run takes ~1 s of real time, so shrinking a failure would outlast the test's timeout and
      // hide the counterexample (the failure above showed only as a 300 s timeout in CI).
      { numRuns: Number(process.env.LEDGER_PROPERTY_RUNS ?? 25), endOnFailure: true },
    );
  }, 300_000);
});
