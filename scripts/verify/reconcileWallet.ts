import type { Address } from "viem";
import { creditEscrowAbi, bigArg, decodeProductLogs, formatUsdg, type ProductEvent } from "@credit-metered/client";
import type { ChainReader } from "./chainReader.js";
import { addressTopic, logsByTopicsPaged, type ScanOptions } from "./logsByTopics.js";

export interface WalletReport {
  lines: string[];
  problems: string[];
}

/** The escrow events that move a wallet's credits (every one indexes `wallet`). */
const WALLET_EVENTS = [
  "Deposited",
  "Withdrawn",
  "JobOpened",
  "JobSettled",
  "JobFailed",
  "JobRefunded",
  "JobDisputeClosed",
  "RestitutionPaid",
  "RestitutionOwed",
] as const;

const sum = (events: ProductEvent[], name: string, field: string) =>
  events.filter((e) => e.eventName === name).reduce((total, e) => total + bigArg(e, field), 0n);

/**
 * Replays a wallet's whole history from the escrow's logs and compares it with the escrow's state:
 * deposits − withdrawals − charges + restored − locked = available, and the still-locked credits = locked.
 * Restitution of upheld disputes counts when paid (`RestitutionPaid`); what the reserve could not pay yet
 * (`RestitutionOwed` without its payment) is reported as owed and checked against the escrow's owed total.
 */
export async function reconcileWallet(
  reader: ChainReader,
  wallet: Address,
  scan: ScanOptions = {},
): Promise<WalletReport> {
  const { contracts } = reader.deployment;
  // Deposited/Withdrawn index the wallet first (topic 1); the job events index the job id first, the wallet second.
  const walletTopic = addressTopic(wallet);
  const [first = [], second = []] = await logsByTopicsPaged(
    reader,
    contracts.creditEscrow,
    [
      [null, walletTopic],
      [null, null, walletTopic],
    ],
    scan,
  );
  // A deposit paid by the wallet itself matches both queries (payer is topic 2): keep each log once.
  const unique = new Map([...first, ...second].map((log) => [`${log.transactionHash}:${log.logIndex}`, log]));
  const logs = [...unique.values()].sort((a, b) =>
    a.blockNumber === b.blockNumber
      ? (a.logIndex ?? 0) - (b.logIndex ?? 0)
      : Number((a.blockNumber ?? 0n) - (b.blockNumber ?? 0n)),
  );
  const events = decodeProductLogs(contracts, logs).filter(
    (e) =>
      (WALLET_EVENTS as readonly string[]).includes(e.eventName) &&
      String(e.args["wallet"]).toLowerCase() === wallet.toLowerCase(),
  );
  const deposited = sum(events, "Deposited", "credits");
  const withdrawn = sum(events, "Withdrawn", "credits");
  const lockedTotal = sum(events, "JobOpened", "creditsLocked");
  const charged = sum(events, "JobSettled", "creditsCharged");
  const settledRefunds = sum(events, "JobSettled", "creditsRefunded");
  const failedReturns = sum(events, "JobFailed", "creditsReturned");
  const timeoutRefunds = sum(events, "JobRefunded", "creditsRefunded");
  const restored = sum(events, "RestitutionPaid", "credits");
  const paidJobs = new Set(
    events.filter((e) => e.eventName === "RestitutionPaid").map((e) => String(e.args["jobId"]).toLowerCase()),
  );
  const owed = events
    .filter((e) => e.eventName === "RestitutionOwed" && !paidJobs.has(String(e.args["jobId"]).toLowerCase()))
    .reduce((total, e) => total + bigArg(e, "credits"), 0n);
  // Locks not yet released by a settlement, failure or refund.
  const stillLocked = lockedTotal - charged - settledRefunds - failedReturns - timeoutRefunds;
  const expectedAvailable = deposited - withdrawn - charged + restored - stillLocked;

  const account = await reader.client.readContract({
    address: contracts.creditEscrow,
    abi: creditEscrowAbi,
    functionName: "accountOf",
    args: [wallet],
  });
  const count = (name: string) => events.filter((e) => e.eventName === name).length;
  const lines = [
    `Wallet ${wallet} on chain ${reader.deployment.chainId} (${events.length} escrow events)`,
    `  deposits       ${deposited} credits (${count("Deposited")}; ${formatUsdg(deposited * 10_000n)} USDG)`,
    `  withdrawals    ${withdrawn} credits (${count("Withdrawn")})`,
    `  jobs           ${count("JobOpened")} opened: ${count("JobSettled")} settled, ${count("JobFailed")} failed, ${count("JobRefunded")} refunded`,
    `  charges        ${charged} credits`,
    `  restored       ${restored} credits (upheld disputes, paid from the reserve)`,
    `  owed           ${owed} credits (upheld, waiting for the reserve to be topped up)`,
    `  locked         ${stillLocked} credits (open jobs)`,
    `  = available    ${expectedAvailable} credits`,
    `  escrow says    available ${account.available}, locked ${account.locked}`,
  ];
  const problems: string[] = [];
  const expect = (ok: boolean, what: string) => {
    lines.push(`  ${ok ? "✓" : "✗"} ${what}`);
    if (!ok) problems.push(what);
  };
  expect(
    expectedAvailable === BigInt(account.available),
    `deposits − withdrawals − charges + restored − locked = available (${expectedAvailable} = ${account.available})`,
  );
  expect(
    stillLocked === BigInt(account.locked),
    `locked from the logs = locked in the escrow (${stillLocked} = ${account.locked})`,
  );
  if (owed > 0n) {
    const ledger = await reader.client.readContract({
      address: contracts.creditEscrow,
      abi: creditEscrowAbi,
      functionName: "ledger",
    });
    expect(
      ledger.owedCredits >= owed,
      `the escrow records the owed restitution (${owed} of ${ledger.owedCredits} owed in total)`,
    );
  }
  const last = events.filter((e) => e.eventName !== "RestitutionOwed").at(-1);
  if (last && typeof last.args["balanceAfter"] === "bigint") {
    expect(
      last.args["balanceAfter"] === BigInt(account.available),
      `the last event's balanceAfter is the available balance (${String(last.args["balanceAfter"])})`,
    );
  }
  return { lines, problems };
}
