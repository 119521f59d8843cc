import { decodeFunctionData, type Address, type Hex, type PublicClient } from "viem";
import {
  DISPUTE_OUTCOMES,
  bigArg,
  contractNameOf,
  decodeProductLogs,
  formatUsdg,
  hexArg,
  numArg,
  type ContractName,
  type ProductEvent,
  PRODUCT_ABIS,
  bytes32ToJobId,
  isJobIdBytes32,
  tierName,
} from "@credit-metered/client";
import type { AppConfig } from "../appTypes";

/** One line of a section: a label and a value; `kind` says how to show the value. */
export interface FactRow {
  label: string;
  value: string;
  kind?: "address" | "tx" | "hash" | "amount" | "text";
}

export interface FactSection {
  title: string;
  rows: FactRow[];
}

export interface DescribedTransaction {
  hash: Hex;
  status: "success" | "reverted";
  blockNumber: bigint;
  timestamp: Date;
  from: Address;
  to: Address | null;
  toName: string;
  call: string | null;
  headline: string;
  sections: FactSection[];
  events: ProductEvent[];
}

const CONTRACT_LABELS: Record<ContractName, string> = {
  stablecoin: "Stablecoin (USDG)",
  stakeToken: "Stake token (SVC)",
  apiKeyRegistry: "API key registry",
  modelCatalog: "Model catalog",
  workerRegistry: "Worker registry",
  creditEscrow: "Credit escrow",
  disputeManager: "Dispute manager",
};

const credits = (value: bigint) => `${value.toLocaleString("en-US")} credits (${formatUsdg(value * 10_000n)} USDG)`;
const usdg = (units: bigint) => `${formatUsdg(units)} USDG`;
const time = (seconds: bigint) => new Date(Number(seconds) * 1000).toISOString().replace(".000Z", "Z");
const jobIdOf = (key: Hex) => (isJobIdBytes32(key) ? bytes32ToJobId(key) : key);
const proof = (hash: Hex) => `sha256:${hash.slice(2)}`;

/** Reads a transaction and its receipt from the chain and explains what the product's contracts did in it. */
export async function describeTransaction(
  config: AppConfig,
  client: PublicClient,
  hash: Hex,
): Promise<DescribedTransaction> {
  const [tx, receipt] = await Promise.all([client.getTransaction({ hash }), client.getTransactionReceipt({ hash })]);
  const block = await client.getBlock({ blockNumber: receipt.blockNumber });
  const toContract = tx.to ? contractNameOf(config.contracts, tx.to) : undefined;
  let call: string | null = null;
  if (toContract) {
    try {
      call = decodeFunctionData({ abi: PRODUCT_ABIS[toContract], data: tx.input }).functionName;
    } catch {
      call = null;
    }
  }
  const events = decodeProductLogs(config.contracts, receipt.logs);
  const label = addressLabeler(config, events);
  const modelOf = (key: Hex) => config.models.find((model) => model.key.toLowerCase() === key.toLowerCase())?.id ?? key;
  const sections: FactSection[] = [];
  const headlines: string[] = [];

  for (const event of events) {
    const e = event;
    switch (`${e.contract}.${e.eventName}`) {
      case "creditEscrow.JobOpened": {
        headlines.push("Escrow lock");
        const locked = bigArg(e, "creditsLocked");
        sections.push({
          title: `Escrow lock — ${jobIdOf(hexArg(e, "jobId"))}`,
          rows: [
            { label: "Job id", value: jobIdOf(hexArg(e, "jobId")), kind: "text" },
            { label: "Wallet", value: hexArg(e, "wallet"), kind: "address" },
            { label: "Model", value: modelOf(hexArg(e, "modelKey")), kind: "text" },
            { label: "Tier", value: tierName(numArg(e, "tier")), kind: "text" },
            { label: "Balance debit", value: `− ${credits(locked)}`, kind: "amount" },
            { label: "Escrow lock", value: credits(locked), kind: "amount" },
            { label: "Available after", value: credits(bigArg(e, "balanceAfter")), kind: "amount" },
            { label: "Refundable after", value: time(bigArg(e, "deadline")), kind: "text" },
          ],
        });
        break;
      }
      case "creditEscrow.JobSettled": {
        headlines.push("Settlement");
        const charged = bigArg(e, "creditsCharged");
        const refunded = bigArg(e, "creditsRefunded");
        sections.push({
          title: `Settlement — ${jobIdOf(hexArg(e, "jobId"))}`,
          rows: [
            { label: "Job id", value: jobIdOf(hexArg(e, "jobId")), kind: "text" },
            { label: "Escrow release", value: credits(charged + refunded), kind: "amount" },
            { label: "Charged", value: credits(charged), kind: "amount" },
            { label: "Refunded to wallet", value: credits(refunded), kind: "amount" },
            { label: "Transfer to worker", value: usdg(bigArg(e, "workerAmount")), kind: "amount" },
            { label: "Transfer to treasury", value: usdg(bigArg(e, "feeAmount")), kind: "amount" },
            { label: "Worker", value: hexArg(e, "worker"), kind: "address" },
            { label: "Wallet", value: hexArg(e, "wallet"), kind: "address" },
            { label: "Verified proof hash", value: proof(hexArg(e, "outputHash")), kind: "hash" },
            {
              label: "Tokens",
              value: `${numArg(e, "promptTokens")} prompt + ${numArg(e, "completionTokens")} completion`,
              kind: "text",
            },
            { label: "Final token at", value: time(bigArg(e, "finalTokenAt")), kind: "text" },
            { label: "Available after", value: credits(bigArg(e, "balanceAfter")), kind: "amount" },
          ],
        });
        break;
      }
      case "creditEscrow.JobFailed":
        headlines.push("Refund (job failed)");
        sections.push({
          title: `Job failed, escrow returned — ${jobIdOf(hexArg(e, "jobId"))}`,
          rows: [
            { label: "Job id", value: jobIdOf(hexArg(e, "jobId")), kind: "text" },
            { label: "Wallet", value: hexArg(e, "wallet"), kind: "address" },
            { label: "Escrow release (returned)", value: credits(bigArg(e, "creditsReturned")), kind: "amount" },
            { label: "Available after", value: credits(bigArg(e, "balanceAfter")), kind: "amount" },
          ],
        });
        break;
      case "creditEscrow.JobRefunded":
        headlines.push("Refund (timeout)");
        sections.push({
          title: `Timeout refund — ${jobIdOf(hexArg(e, "jobId"))}`,
          rows: [
            { label: "Job id", value: jobIdOf(hexArg(e, "jobId")), kind: "text" },
            { label: "Wallet", value: hexArg(e, "wallet"), kind: "address" },
            { label: "Escrow release (refunded)", value: credits(bigArg(e, "creditsRefunded")), kind: "amount" },
            { label: "Available after", value: credits(bigArg(e, "balanceAfter")), kind: "amount" },
            { label: "Triggered by", value: hexArg(e, "caller"), kind: "address" },
          ],
        });
        break;
      case "disputeManager.DisputeOpened":
        headlines.push("Dispute opened");
        sections.push({
          title: `Dispute opened — ${jobIdOf(hexArg(e, "jobId"))}`,
          rows: [
            { label: "Job id", value: jobIdOf(hexArg(e, "jobId")), kind: "text" },
            { label: "Wallet", value: hexArg(e, "wallet"), kind: "address" },
            { label: "Worker", value: hexArg(e, "worker"), kind: "address" },
            { label: "Client's hash", value: proof(hexArg(e, "clientHash")), kind: "hash" },
            { label: "Worker's proof hash", value: proof(hexArg(e, "proofHash")), kind: "hash" },
            { label: "Arbitration deadline", value: time(bigArg(e, "deadline")), kind: "text" },
          ],
        });
        break;
      case "disputeManager.DisputeResolved": {
        const outcome = DISPUTE_OUTCOMES[numArg(e, "outcome")] ?? "unknown";
        headlines.push(`Dispute ${outcome}`);
        sections.push({
          title: `Dispute ${outcome} — ${jobIdOf(hexArg(e, "jobId"))}`,
          rows: [
            { label: "Job id", value: jobIdOf(hexArg(e, "jobId")), kind: "text" },
            { label: "Outcome", value: outcome, kind: "text" },
            { label: "Credits restored", value: credits(bigArg(e, "creditsRestored")), kind: "amount" },
            {
              label: "Worker stake slashed",
              value: `${formatUsdg(bigArg(e, "slashAmount") / 10n ** 12n)} SVC`,
              kind: "amount",
            },
            { label: "Resolved by", value: hexArg(e, "resolver"), kind: "address" },
          ],
        });
        break;
      }
      case "creditEscrow.JobDisputeClosed":
        sections.push({
          title: `Escrow dispute closed — ${jobIdOf(hexArg(e, "jobId"))}`,
          rows: [
            {
              label: "Upheld",
              value: e.args["upheld"] === true ? "yes: the charge came back from the reserve" : "no",
              kind: "text",
            },
            { label: "Credits restored", value: credits(bigArg(e, "creditsRestored")), kind: "amount" },
            { label: "Available after", value: credits(bigArg(e, "balanceAfter")), kind: "amount" },
          ],
        });
        break;
      case "creditEscrow.Deposited":
        headlines.push("Deposit");
        sections.push({
          title: "Deposit",
          rows: [
            { label: "Wallet", value: hexArg(e, "wallet"), kind: "address" },
            { label: "Paid by", value: hexArg(e, "payer"), kind: "address" },
            { label: "Stablecoin in", value: usdg(bigArg(e, "amount")), kind: "amount" },
            { label: "Credits added", value: credits(bigArg(e, "credits")), kind: "amount" },
            { label: "Available after", value: credits(bigArg(e, "balanceAfter")), kind: "amount" },
          ],
        });
        break;
      case "creditEscrow.Withdrawn":
        headlines.push("Withdrawal");
        sections.push({
          title: "Withdrawal",
          rows: [
            { label: "Wallet", value: hexArg(e, "wallet"), kind: "address" },
            { label: "Credits out", value: credits(bigArg(e, "credits")), kind: "amount" },
            { label: "Available after", value: credits(bigArg(e, "balanceAfter")), kind: "amount" },
          ],
        });
        break;
      case "apiKeyRegistry.KeyRegistered":
      case "apiKeyRegistry.KeyRevoked":
      case "apiKeyRegistry.KeySuspended":
      case "apiKeyRegistry.KeyUnsuspended": {
        const what = e.eventName.replace("Key", "Key ").toLowerCase();
        headlines.push(what.charAt(0).toUpperCase() + what.slice(1));
        sections.push({
          title: what.charAt(0).toUpperCase() + what.slice(1),
          rows: [
            { label: "Wallet", value: hexArg(e, "wallet"), kind: "address" },
            { label: "Key hash", value: hexArg(e, "keyHash"), kind: "hash" },
          ],
        });
        break;
      }
      case "apiKeyRegistry.KeyCommitted":
        // The first of a key registration's two transactions: the hash stays hidden until the registration.
        headlines.push("Key commitment");
        sections.push({
          title: "Key commitment",
          rows: [
            { label: "Wallet", value: hexArg(e, "wallet"), kind: "address" },
            { label: "Commitment", value: hexArg(e, "commitment"), kind: "hash" },
          ],
        });
        break;
      case "modelCatalog.ModelChangeScheduled":
        // Announced catalog change: it can apply only from readyAt on (2 days later).
        headlines.push("Catalog change scheduled");
        sections.push({
          title: "Catalog change scheduled",
          rows: [
            { label: "Model", value: String(e.args["modelId"] ?? ""), kind: "text" },
            {
              label: "Applies from",
              value: new Date(Number(bigArg(e, "readyAt")) * 1000).toISOString(),
              kind: "text",
            },
          ],
        });
        break;
      case "workerRegistry.WorkerSlashed":
        sections.push({
          title: "Worker slashed",
          rows: [
            { label: "Worker", value: hexArg(e, "worker"), kind: "address" },
            { label: "Job id", value: jobIdOf(hexArg(e, "jobId")), kind: "text" },
            { label: "Amount", value: `${formatUsdg(bigArg(e, "amount") / 10n ** 12n)} SVC`, kind: "amount" },
          ],
        });
        break;
      default:
        break;
    }
  }

  const transfers = events.filter((e) => e.contract === "stablecoin" && e.eventName === "Transfer");
  if (transfers.length > 0) {
    sections.push({
      title: "Stablecoin transfers",
      rows: transfers.map((e) => ({
        label: `${label(hexArg(e, "from"))} → ${label(hexArg(e, "to"))}`,
        value: usdg(bigArg(e, "value")),
        kind: "amount" as const,
      })),
    });
  }

  return {
    hash,
    status: receipt.status,
    blockNumber: receipt.blockNumber,
    timestamp: new Date(Number(block.timestamp) * 1000),
    from: tx.from,
    to: tx.to,
    toName: toContract ? CONTRACT_LABELS[toContract] : "not a product contract",
    call,
    headline: headlines.length > 0 ? [...new Set(headlines)].join(" · ") : "No product event in this transaction",
    sections,
    events,
  };
}

/** Names the parties of the product (escrow, treasury, the job's worker and wallet) in transfer lines. */
function addressLabeler(config: AppConfig, events: ProductEvent[]): (address: Hex) => string {
  const names = new Map<string, string>();
  names.set(config.contracts.creditEscrow.toLowerCase(), "escrow");
  names.set(config.treasury.toLowerCase(), "treasury");
  for (const event of events) {
    if (typeof event.args["worker"] === "string") names.set((event.args["worker"] as string).toLowerCase(), "worker");
    if (typeof event.args["wallet"] === "string") names.set((event.args["wallet"] as string).toLowerCase(), "wallet");
  }
  return (address) => {
    const name = names.get(address.toLowerCase());
    const short = `${address.slice(0, 6)}…${address.slice(-4)}`;
    return name ? `${name} (${short})` : short;
  };
}
