import { createHash } from "node:crypto";
import type { Address, Hex } from "viem";
import {
  creditEscrowAbi,
  modelCatalogAbi,
  bytes32ToJobId,
  UNIT_PER_CREDIT,
  chargeFor,
  splitCharge,
  tierName,
  DISPUTE_OUTCOMES,
  bigArg,
  formatUsdg,
  hexArg,
  numArg,
  type ProductEvent,
} from "@credit-metered/client";
import type { ChainReader } from "./chainReader.js";
import type { JobEvents } from "./findJobEvents.js";

/** What the verification found: printable lines, and every inconsistency (empty when the job checks out). */
export interface JobReport {
  jobId: string;
  outcome: "open" | "settled" | "failed" | "refunded" | "dispute upheld" | "disputed" | "unknown";
  lines: string[];
  problems: string[];
}

const one = (events: ProductEvent[], contract: string, name: string) =>
  events.find((event) => event.contract === contract && event.eventName === name);
const credits = (value: bigint) => `${value} credits (${formatUsdg(value * UNIT_PER_CREDIT)} USDG)`;
const proof = (hash: Hex) => `sha256:${hash.slice(2)}`;

/** sha256 of the text's UTF-8 bytes, as the worker's proof hash is computed (docs/DESIGN.md). */
export function outputHashOfText(text: string): Hex {
  return `0x${createHash("sha256").update(text, "utf8").digest("hex")}`;
}

/**
 * Checks one job against the chain's own rules: the charge follows the pricing rule at the prices the job was
 * opened at, charge + refund = lock, worker + fee = charge × 10,000 with the fee in effect when the job opened,
 * the worker's share was transferred (or kept claimable) in the settlement transaction, refunds return the whole
 * lock, and (with `text`) the received text hashes to the proof.
 */
export async function checkJob(reader: ChainReader, job: JobEvents, text?: string): Promise<JobReport> {
  const { contracts } = reader.deployment;
  const lines: string[] = [];
  const problems: string[] = [];
  const expect = (ok: boolean, what: string) => {
    lines.push(`  ${ok ? "✓" : "✗"} ${what}`);
    if (!ok) problems.push(what);
  };
  let jobId: string = job.jobKey;
  try {
    jobId = bytes32ToJobId(job.jobKey);
  } catch {
    jobId = job.jobKey;
  }
  const report: JobReport = { jobId, outcome: "unknown", lines, problems };
  const opened = one(job.events, "creditEscrow", "JobOpened");
  if (!opened) {
    problems.push(`no escrow lock (JobOpened) for ${jobId} on this chain`);
    lines.push(`Job ${jobId}: not found on chain ${reader.deployment.chainId}`);
    return report;
  }
  const locked = bigArg(opened, "creditsLocked");
  const modelKey = hexArg(opened, "modelKey");
  const modelId = reader.deployment.models.find((m) => m.key.toLowerCase() === modelKey.toLowerCase())?.id ?? modelKey;
  lines.push(`Job ${jobId} (${job.jobKey})`);
  lines.push(`Escrow lock      tx ${opened.transactionHash} (block ${opened.blockNumber})`);
  lines.push(`  wallet         ${hexArg(opened, "wallet")}`);
  lines.push(`  model          ${modelId}, tier ${tierName(numArg(opened, "tier"))}`);
  lines.push(`  locked         ${credits(locked)}; available after ${bigArg(opened, "balanceAfter")} credits`);

  const [, , creditsPerRequest, creditsPer1kTokens] = await reader.client.readContract({
    address: contracts.modelCatalog,
    abi: modelCatalogAbi,
    functionName: "listedPricing",
    args: [modelKey],
    blockNumber: opened.blockNumber,
  });
  const prices = { creditsPerRequest, creditsPer1kTokens };
  lines.push(`  prices         ${creditsPerRequest} per request, ${creditsPer1kTokens} per 1k tokens (at the lock)`);

  const settled = one(job.events, "creditEscrow", "JobSettled");
  const failed = one(job.events, "creditEscrow", "JobFailed");
  const refunded = one(job.events, "creditEscrow", "JobRefunded");
  const endings = [settled, failed, refunded].filter(Boolean);
  expect(endings.length <= 1, `at most one of settlement, failure, refund (found ${endings.length})`);

  if (settled) {
    report.outcome = "settled";
    const charged = bigArg(settled, "creditsCharged");
    const refund = bigArg(settled, "creditsRefunded");
    const workerAmount = bigArg(settled, "workerAmount");
    const feeAmount = bigArg(settled, "feeAmount");
    const worker = hexArg(settled, "worker") as Address;
    const completionTokens = bigArg(settled, "completionTokens");
    const outputHash = hexArg(settled, "outputHash");
    lines.push(`Settlement       tx ${settled.transactionHash} (block ${settled.blockNumber})`);
    lines.push(`  worker         ${worker}`);
    lines.push(`  tokens         ${numArg(settled, "promptTokens")} prompt, ${completionTokens} completion`);
    lines.push(`  charged        ${credits(charged)}`);
    lines.push(`  refunded       ${credits(refund)}`);
    lines.push(`  to worker      ${formatUsdg(workerAmount)} USDG`);
    lines.push(`  to treasury    ${formatUsdg(feeAmount)} USDG`);
    lines.push(`  proof hash     ${proof(outputHash)}`);
    const expectedCharge = chargeFor(prices, completionTokens, locked);
    expect(
      charged === expectedCharge,
      `charge ${charged} = pricing rule for ${completionTokens} tokens (${expectedCharge})`,
    );
    expect(charged + refund === locked, `charged + refunded = locked (${charged} + ${refund} = ${locked})`);
    expect(
      workerAmount + feeAmount === charged * UNIT_PER_CREDIT,
      `worker + fee = charge × 10,000 (${workerAmount} + ${feeAmount} = ${charged * UNIT_PER_CREDIT})`,
    );
    // The fee is fixed when the job opens: the rate in effect at the lock's block.
    const feeBps = await reader.client.readContract({
      address: contracts.creditEscrow,
      abi: creditEscrowAbi,
      functionName: "feeBps",
      blockNumber: opened.blockNumber,
    });
    const split = splitCharge(charged, feeBps);
    expect(
      split.feeAmount === feeAmount,
      `fee = ${feeBps} bps of the charge, the rate at the lock (${split.feeAmount})`,
    );
    // The treasury in effect when the settlement was mined (a scheduled successor takes over by block time).
    const treasury = await reader.client.readContract({
      address: contracts.creditEscrow,
      abi: creditEscrowAbi,
      functionName: "treasury",
      blockNumber: settled.blockNumber,
    });
    checkTransfers(reader, job.txEvents.get(settled.transactionHash) ?? [], { worker, treasury }, expect);
    if (text !== undefined) {
      const textHash = outputHashOfText(text);
      lines.push(`  text hash      ${proof(textHash)}`);
      expect(textHash.toLowerCase() === outputHash.toLowerCase(), "the given text hashes to the proof hash");
    }
  } else if (failed) {
    report.outcome = "failed";
    const returned = bigArg(failed, "creditsReturned");
    lines.push(`Failure          tx ${failed.transactionHash} (block ${failed.blockNumber})`);
    lines.push(`  returned       ${credits(returned)}`);
    expect(returned === locked, `the whole lock came back (${returned} = ${locked})`);
  } else if (refunded) {
    report.outcome = "refunded";
    const back = bigArg(refunded, "creditsRefunded");
    lines.push(`Timeout refund   tx ${refunded.transactionHash} (block ${refunded.blockNumber})`);
    lines.push(`  refunded       ${credits(back)} (triggered by ${hexArg(refunded, "caller")})`);
    expect(back === locked, `the whole lock was refunded (${back} = ${locked})`);
  } else {
    report.outcome = "open";
    lines.push("Still open: no settlement, failure or refund yet.");
  }
  if (text !== undefined && !settled) expect(false, "a text was given but the job has no proof hash (not settled)");

  const disputeOpened = one(job.events, "disputeManager", "DisputeOpened");
  if (disputeOpened) {
    report.outcome = "disputed";
    lines.push(`Dispute          tx ${disputeOpened.transactionHash} (block ${disputeOpened.blockNumber})`);
    lines.push(`  client hash    ${proof(hexArg(disputeOpened, "clientHash"))}`);
    lines.push(`  proof hash     ${proof(hexArg(disputeOpened, "proofHash"))}`);
    if (settled) {
      expect(
        hexArg(disputeOpened, "proofHash").toLowerCase() === hexArg(settled, "outputHash").toLowerCase(),
        "the disputed proof hash is the settled one",
      );
    }
    const resolved = one(job.events, "disputeManager", "DisputeResolved");
    const closed = one(job.events, "creditEscrow", "JobDisputeClosed");
    if (resolved) {
      const outcome = DISPUTE_OUTCOMES[numArg(resolved, "outcome")] ?? "unknown";
      lines.push(`  outcome        ${outcome} (tx ${resolved.transactionHash})`);
      lines.push(`  restored       ${credits(bigArg(resolved, "creditsRestored"))}`);
      if (outcome === "upheld") {
        report.outcome = "dispute upheld";
        const charged = settled ? bigArg(settled, "creditsCharged") : 0n;
        expect(bigArg(resolved, "creditsRestored") === charged, `upheld: the charge (${charged}) was restored`);
        expect(closed?.args["upheld"] === true, "the escrow closed the dispute as upheld");
      } else {
        expect(bigArg(resolved, "creditsRestored") === 0n, `${outcome}: nothing restored`);
      }
    } else {
      lines.push("  outcome        pending arbitration");
    }
  }
  return report;
}

/**
 * The settlement transaction's stablecoin transfers out of the escrow must pay the worker the sum of its
 * `workerAmount`s (a batch pays once per worker) and the treasury the sum of the `feeAmount`s (a batch pays it
 * once), each kept claimable instead (`PayoutDeferred`) when the stablecoin refused the transfer.
 */
function checkTransfers(
  reader: ChainReader,
  txEvents: ProductEvent[],
  { worker, treasury }: { worker: Address; treasury: Address },
  expect: (ok: boolean, what: string) => void,
): void {
  const escrow = reader.deployment.contracts.creditEscrow.toLowerCase();
  const settlements = txEvents.filter((e) => e.contract === "creditEscrow" && e.eventName === "JobSettled");
  const transfersOut = txEvents.filter(
    (e) => e.contract === "stablecoin" && e.eventName === "Transfer" && hexArg(e, "from").toLowerCase() === escrow,
  );
  const paidTo = (address: string) =>
    transfersOut
      .filter((e) => hexArg(e, "to").toLowerCase() === address.toLowerCase())
      .reduce((sum, e) => sum + bigArg(e, "value"), 0n);
  const deferredTo = (address: string) =>
    txEvents
      .filter(
        (e) =>
          e.contract === "creditEscrow" &&
          e.eventName === "PayoutDeferred" &&
          hexArg(e, "recipient").toLowerCase() === address.toLowerCase(),
      )
      .reduce((sum, e) => sum + bigArg(e, "amount"), 0n);
  const owedWorker = settlements
    .filter((e) => hexArg(e, "worker").toLowerCase() === worker.toLowerCase())
    .reduce((sum, e) => sum + bigArg(e, "workerAmount"), 0n);
  const workerDeferred = deferredTo(worker);
  const workerPaid = paidTo(worker) + workerDeferred;
  expect(
    workerPaid === owedWorker,
    `stablecoin to the worker ${formatUsdg(workerPaid)} USDG matches the event` +
      (workerDeferred > 0n ? ` (${formatUsdg(workerDeferred)} kept claimable)` : ""),
  );
  const owedTreasury = settlements.reduce((sum, e) => sum + bigArg(e, "feeAmount"), 0n);
  const treasuryDeferred = deferredTo(treasury);
  const treasuryPaid = paidTo(treasury) + treasuryDeferred;
  expect(
    treasuryPaid === owedTreasury,
    `stablecoin to the treasury ${formatUsdg(treasuryPaid)} USDG matches the fees of the transaction's settlements` +
      (treasuryDeferred > 0n ? ` (${formatUsdg(treasuryDeferred)} kept claimable)` : ""),
  );
}
