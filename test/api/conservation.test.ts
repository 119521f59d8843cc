import { describe, expect, it } from "vitest";
import type { Address } from "viem";
import { rawRequest } from "../support/api.js";
import { accountOf } from "../support/chain.js";
import { escrowBalanceSheet, escrowEvents, openJobsOnChain, walletLedger } from "../support/conservationAudit.js";
import { stackInfo } from "../support/stackInfo.js";
import { waitFor } from "../../scripts/stack/waitFor.js";

// Runs after every other file (test/support/sequencer.ts): an audit of what the suite did, from the chain alone
// (the audit itself lives in test/support/conservationAudit.ts; the chaos suite runs it after every fault).

describe("credits are conserved (after the whole suite)", () => {
  it("the demo wallet: deposits − withdrawals − charges + restored = available + locked, with nothing locked", async () => {
    const wallet = stackInfo().demo.wallet.toLowerCase() as Address;
    // Every job of the suite has ended: no credits stay locked.
    await waitFor("no locked credits left", async () => (await accountOf(wallet)).locked === 0n, {
      timeoutMs: 30_000,
    });
    const ledger = await walletLedger(wallet);

    expect(ledger.deposited).toBeGreaterThan(0n);
    expect(ledger.deposited - ledger.withdrawn - ledger.charged + ledger.restored).toBe(
      ledger.available + ledger.locked,
    );
    expect(ledger.locked).toBe(0n);

    // The gateway reports the same balance.
    const api = (await rawRequest("GET", "/v1/account", { apiKey: stackInfo().demo.apiKey })).json<{
      credits_remaining: number;
    }>();
    expect(BigInt(api.credits_remaining)).toBe(ledger.available);
  });

  it("every job the suite opened has ended: settled, failed or refunded, none left open", async () => {
    expect((await escrowEvents("JobOpened")).length).toBeGreaterThan(0);
    await waitFor("every opened job ended", async () => (await openJobsOnChain()).length === 0);
  });

  it("the escrow holds exactly every wallet's credits plus the dispute reserve and unclaimed payouts (fees leave in each settlement)", async () => {
    const sheet = await escrowBalanceSheet();
    expect(sheet.creditsOutstanding).toBe(sheet.credits);
    expect(sheet.held).toBe(sheet.owed);
  });
});
