import { DeadlineExceededError, withDeadline } from "../runtime/withDeadline.js";
import { blockHashAt } from "./blockHashAt.js";
import {
  decodeAbiParameters,
  getAbiItem,
  toEventSelector,
  type AbiEvent,
  type Address,
  type Hex,
  type TransactionReceipt,
} from "viem";
import {
  CHAIN_JOB_STATUSES,
  KEY_STATUSES,
  type ChainJobStatus,
  type Deployment,
  type KeyStatus,
} from "@credit-metered/client";
import { apiKeyRegistryAbi, creditEscrowAbi, disputeManagerAbi } from "./abis.js";
import type { ChainClients } from "./createChainClients.js";
import { receiptArg, type Receipt } from "./receiptTypes.js";
import type { TransactionSender } from "./transactionSender.js";
import { OPEN_SKIP_REASONS, type LockOutcome, type LockRequest } from "./lockBatcher.js";

// The events the gateway reads off its own receipts, with their topic0, made once. Each is told by its topic0 and
// only its data (non-indexed fields) is decoded, against inputs also made once: viem's decodeEventLog formats and
// hashes the event's signature again on every call, and the gateway decodes a batch's receipt once per job (the
// bench's profile found the rehashing at 1.6 ms of the gateway's 13 ms per stream, then decodeEventLog at 0.1 ms
// per settled job; issue 26). Every one of them has the job id as its first indexed field (topics[1]).
const JOB_OPENED = getAbiItem({ abi: creditEscrowAbi, name: "JobOpened" });
const JOB_OPEN_SKIPPED = getAbiItem({ abi: creditEscrowAbi, name: "JobOpenSkipped" });
const SETTLEMENT_SKIPPED = getAbiItem({ abi: creditEscrowAbi, name: "SettlementSkipped" });
const JOB_SETTLED = getAbiItem({ abi: creditEscrowAbi, name: "JobSettled" });
const TOPIC = {
  jobOpened: toEventSelector(JOB_OPENED),
  jobOpenSkipped: toEventSelector(JOB_OPEN_SKIPPED),
  settlementSkipped: toEventSelector(SETTLEMENT_SKIPPED),
  jobSettled: toEventSelector(JOB_SETTLED),
} as const;

/** Decodes the data of `event`'s logs into its non-indexed fields by name. */
function dataDecoder<T>(event: AbiEvent): (data: Hex) => T {
  const inputs = event.inputs.filter((input) => !input.indexed);
  return (data) => {
    const values = decodeAbiParameters(inputs, data);
    const fields: Record<string, unknown> = {};
    inputs.forEach((input, i) => (fields[input.name ?? String(i)] = values[i]));
    return fields as T;
  };
}
const jobOpenedData = dataDecoder<{ balanceAfter: bigint; creditsLocked: bigint; deadline: bigint }>(JOB_OPENED);
const jobOpenSkippedData = dataDecoder<{ reason: number }>(JOB_OPEN_SKIPPED);
const jobSettledData = dataDecoder<{ creditsCharged: bigint; balanceAfter: bigint }>(JOB_SETTLED);

/** The job id of one of the events above (its first indexed field). */
function jobIdOf(log: { topics: readonly Hex[] }): Hex {
  const jobId = log.topics[1];
  if (jobId === undefined) throw new Error("an escrow job event without its job id topic");
  return jobId;
}

/** How often the chain's clock is read to learn how far it runs ahead of this host's (EscrowChain.acceptedAtNow). */
const CHAIN_CLOCK_SAMPLE_MS = 5_000;
/** Bound on one read of the chain's clock. */
const CHAIN_CLOCK_TIMEOUT_MS = 2_000;

/** How far back a job's refund is looked for: it happened moments ago (a timed-out job's own refund race). */
const REFUND_LOOKBACK_BLOCKS = 10_000n;

/** The dispute manager's ABI plus the escrow's errors, which `markDisputed` reverts with through `openDispute`. */
const disputeWithEscrowErrorsAbi = [
  ...disputeManagerAbi,
  ...creditEscrowAbi.filter((entry) => entry.type === "error"),
] as const;

/**
 * Gas limit of an openJobBatch: the transaction's base cost plus a bound per lock. A lock costs ~32k warm and
 * ~77k at worst (snapshots/gas.json: openJobGasUsed, cold wallet, key and model); only the gas used is paid.
 */
const LOCK_BATCH_GAS_BASE = 40_000n;
const LOCK_GAS_PER_LOCK = 90_000n;
/**
 * Gas limit of a settleBatch: a bound, never an estimate, because a settlement leaves before its lock is mined
 * (issue 26) and an estimate on a state without the lock would price the skip, not the settlement. A receipt costs
 * ~30k warm and ~100k alone with cold worker, bond and price-version words (snapshots/gas.json); only the gas used
 * is paid.
 */
const SETTLE_BATCH_GAS_BASE = 60_000n;
const SETTLE_GAS_PER_RECEIPT = 150_000n;
/**
 * Most gas one transaction may ask for: EIP-7825's cap (2^24, Osaka), which nodes enforce on every transaction.
 * Settlements ride with a lock batch only as far as the two bounds together stay under it.
 */
const TRANSACTION_GAS_CAP = 16_777_216n;

/** The gas bound of `count` settlements in one batch. */
function settleBatchGas(count: number): bigint {
  return SETTLE_BATCH_GAS_BASE + SETTLE_GAS_PER_RECEIPT * BigInt(count);
}

export interface OpenedJob {
  balanceAfter: bigint;
  creditsLocked: bigint;
  deadline: bigint;
}

export interface SettlementFacts {
  wallet: Address;
  worker: Address;
  outputHash: Hex;
  creditsCharged: bigint;
  finalTokenAt: bigint;
}

/** The escrow, key registry and dispute contracts as the gateway uses them: reads, and writes via the sender. */
export class EscrowChain {
  /**
   * Set by the gateway once its index-lag sampler runs: true while the node missed the last sample. Request-path
   * reads (balance) then fail at once with a retryable 503 instead of each waiting out the RPC timeouts.
   */
  nodeSilent: () => boolean = () => false;

  /** Seconds the chain's clock (its latest block) runs ahead of this host's; zero when it does not. */
  private chainAheadSeconds = 0;
  private clockTimer: NodeJS.Timeout | undefined;
  /** Settlement receipts' JobSettled logs by job id, held as long as the receipt is (settledLogsOf). */
  private readonly settledLogs = new WeakMap<TransactionReceipt, Map<string, TransactionReceipt["logs"][number]>>();

  constructor(
    private readonly clients: ChainClients,
    private readonly deployment: Deployment,
    readonly sender: TransactionSender,
  ) {}

  /**
   * A request's acceptance time for its lock (`OpenRequest.acceptedAt`), unix seconds: this host's clock, moved
   * forward by what the chain's clock is known to run ahead (a local chain whose time was moved by
   * `evm_increaseTime`; on a live chain block times trail the wall clock, so nothing is added). The escrow takes
   * it within `MAX_LOCK_DELAY` before its block and the clock skew after. The first call starts a background
   * sample of the latest block's time, every CHAIN_CLOCK_SAMPLE_MS; a lock skipped as `accepted_at_invalid`
   * samples again at once (`resampleClock`).
   */
  acceptedAtNow(nowMs = Date.now()): bigint {
    if (!this.clockTimer) {
      this.clockTimer = setInterval(() => this.resampleClock(), CHAIN_CLOCK_SAMPLE_MS);
      this.clockTimer.unref();
      this.resampleClock();
    }
    return BigInt(Math.floor(nowMs / 1000) + this.chainAheadSeconds);
  }

  /** Reads the latest block's time and keeps how far it runs ahead of this host's clock (never fails). */
  resampleClock(): void {
    const sampledAt = Date.now();
    withDeadline(this.latestBlockTimestamp(), CHAIN_CLOCK_TIMEOUT_MS, "chain clock").then(
      (timestamp) => {
        this.chainAheadSeconds = Math.max(0, Number(timestamp) - Math.floor(sampledAt / 1000));
      },
      () => undefined,
    );
  }

  get escrowAddress(): Address {
    return this.deployment.contracts.creditEscrow;
  }

  get chainId(): number {
    return this.deployment.chainId;
  }

  openJob(jobKey: Hex, keyHash: Hex, modelKey: Hex, maxTokens: number): Promise<Hex> {
    return this.sender.send({
      address: this.deployment.contracts.creditEscrow,
      abi: creditEscrowAbi,
      functionName: "openJob",
      args: [jobKey, keyHash, modelKey, maxTokens],
    });
  }

  /**
   * Many locks in one transaction; a lock the escrow cannot take is skipped (JobOpenSkipped), never reverting,
   * so the gas limit is a bound per lock instead of an estimate (which would cost round trips on the hot path).
   * `onSigned` hears the hash once the transaction is signed, before it leaves (TransactionManager.send).
   */
  openJobBatch(
    requests: readonly LockRequest[],
    onSigned?: (hash: Hex) => void,
    settlements?: { receipts: readonly Receipt[]; signatures: readonly Hex[] },
  ): Promise<Hex> {
    const locks = requests.map((request) => ({
      jobId: request.jobKey,
      keyHash: request.keyHash,
      modelKey: request.modelKey,
      maxTokens: request.maxTokens,
      acceptedAt: request.acceptedAt,
    }));
    const lockGas = LOCK_BATCH_GAS_BASE + LOCK_GAS_PER_LOCK * BigInt(requests.length);
    if (settlements && settlements.receipts.length > 0) {
      // The locks first, then the settlements ready with them (CreditEscrow.openAndSettleBatch): one transaction.
      return this.sender.send(
        {
          address: this.deployment.contracts.creditEscrow,
          abi: creditEscrowAbi,
          functionName: "openAndSettleBatch",
          args: [locks, settlements.receipts.map(receiptArg), [...settlements.signatures]],
        },
        { gasLimit: lockGas + settleBatchGas(settlements.receipts.length), onSigned },
      );
    }
    return this.sender.send(
      {
        address: this.deployment.contracts.creditEscrow,
        abi: creditEscrowAbi,
        functionName: "openJobBatch",
        args: [locks],
      },
      { gasLimit: lockGas, onSigned },
    );
  }

  /** How many settlements fit beside `locks` locks in one transaction under the transaction gas cap. */
  ridersBeside(locks: number): number {
    const room = TRANSACTION_GAS_CAP - LOCK_BATCH_GAS_BASE - LOCK_GAS_PER_LOCK * BigInt(locks) - SETTLE_BATCH_GAS_BASE;
    return room > 0n ? Number(room / SETTLE_GAS_PER_RECEIPT) : 0;
  }

  /**
   * Why the escrow refused a lock, in the words of `openJob`'s revert: the same call simulated on the state right
   * after the batch that skipped it (`JobOpenSkipped` carries only a reason code; the revert carries the balance,
   * the cap and when room frees up). Undefined when the simulation no longer reverts (state moved on).
   */
  async openJobRevertAt(request: LockRequest, blockNumber: bigint): Promise<unknown> {
    try {
      await this.clients.publicClient.simulateContract({
        address: this.deployment.contracts.creditEscrow,
        abi: creditEscrowAbi,
        functionName: "openJob",
        args: [request.jobKey, request.keyHash, request.modelKey, request.maxTokens],
        account: this.sender.address,
        blockNumber,
      });
      return undefined;
    } catch (error) {
      return error;
    }
  }

  failJob(jobKey: Hex): Promise<Hex> {
    return this.sender.send({
      address: this.deployment.contracts.creditEscrow,
      abi: creditEscrowAbi,
      functionName: "failJob",
      args: [jobKey],
    });
  }

  refund(jobKey: Hex): Promise<Hex> {
    return this.sender.send({
      address: this.deployment.contracts.creditEscrow,
      abi: creditEscrowAbi,
      functionName: "refund",
      args: [jobKey],
    });
  }

  settle(receipt: Receipt, signature: Hex): Promise<Hex> {
    return this.sender.send({
      address: this.deployment.contracts.creditEscrow,
      abi: creditEscrowAbi,
      functionName: "settle",
      args: [receiptArg(receipt), signature],
    });
  }

  /**
   * Settles receipts in one transaction, sent at once behind their locks (same signer, later nonce): a receipt the
   * escrow cannot settle, its lock skipped included, is skipped (`SettlementSkipped`), never reverting the batch.
   */
  settleBatch(receipts: readonly Receipt[], signatures: readonly Hex[]): Promise<Hex> {
    return this.sender.send(
      {
        address: this.deployment.contracts.creditEscrow,
        abi: creditEscrowAbi,
        functionName: "settleBatch",
        args: [receipts.map(receiptArg), [...signatures]],
      },
      { gasLimit: settleBatchGas(receipts.length) },
    );
  }

  openDispute(jobKey: Hex, settlement: SettlementFacts, clientHash: Hex): Promise<Hex> {
    return this.sender.send({
      address: this.deployment.contracts.disputeManager,
      abi: disputeWithEscrowErrorsAbi,
      functionName: "openDispute",
      args: [jobKey, settlement, clientHash],
    });
  }

  async jobOf(
    jobKey: Hex,
  ): Promise<{ status: ChainJobStatus; wallet: Address; creditsLocked: bigint; deadline: bigint }> {
    const [status, wallet, creditsLocked, deadline] = await this.clients.publicClient.readContract({
      address: this.deployment.contracts.creditEscrow,
      abi: creditEscrowAbi,
      functionName: "jobOf",
      args: [jobKey],
    });
    return { status: CHAIN_JOB_STATUSES[status] ?? "none", wallet, creditsLocked, deadline };
  }

  async availableCredits(wallet: Address): Promise<bigint> {
    if (this.nodeSilent()) throw new DeadlineExceededError("the chain node is not answering (balance not read)");
    const account = await this.clients.publicClient.readContract({
      address: this.deployment.contracts.creditEscrow,
      abi: creditEscrowAbi,
      functionName: "accountOf",
      args: [wallet],
    });
    return BigInt(account.available);
  }

  async keyStatus(keyHash: Hex, blockNumber: bigint): Promise<{ wallet: Address; status: KeyStatus }> {
    const [wallet, status] = await this.clients.publicClient.readContract({
      address: this.deployment.contracts.apiKeyRegistry,
      abi: apiKeyRegistryAbi,
      functionName: "statusOfKey",
      args: [keyHash],
      blockNumber,
    });
    return { wallet, status: KEY_STATUSES[status] ?? "none" };
  }

  async keyOf(wallet: Address): Promise<{ keyHash: Hex; status: KeyStatus; createdAt: bigint }> {
    const [keyHash, status, createdAt] = await this.clients.publicClient.readContract({
      address: this.deployment.contracts.apiKeyRegistry,
      abi: apiKeyRegistryAbi,
      functionName: "keyOf",
      args: [wallet],
    });
    return { keyHash, status: KEY_STATUSES[status] ?? "none", createdAt };
  }

  blockNumber(): Promise<bigint> {
    return this.clients.publicClient.getBlockNumber({ cacheTime: 0 });
  }

  /** The hash of the canonical chain's block at this height (undefined if the chain has none there yet). */
  blockHashAt(blockNumber: bigint): Promise<Hex | undefined> {
    return blockHashAt(this.clients.publicClient, blockNumber);
  }

  /** Who signed a transaction (lowercase 0x address). */
  async senderOf(hash: Hex): Promise<string> {
    return (await this.clients.publicClient.getTransaction({ hash })).from.toLowerCase();
  }

  async blockTimestamp(blockNumber: bigint): Promise<bigint> {
    return (await this.clients.publicClient.getBlock({ blockNumber })).timestamp;
  }

  /** The transaction of the job's `JobRefunded` among the last REFUND_LOOKBACK_BLOCKS blocks, if any. */
  async refundTxOf(jobKey: Hex): Promise<Hex | undefined> {
    const latest = await this.clients.publicClient.getBlockNumber();
    const [refunded] = await this.clients.publicClient.getContractEvents({
      address: this.deployment.contracts.creditEscrow,
      abi: creditEscrowAbi,
      eventName: "JobRefunded",
      args: { jobId: jobKey },
      fromBlock: latest > REFUND_LOOKBACK_BLOCKS ? latest - REFUND_LOOKBACK_BLOCKS : 0n,
      toBlock: latest,
    });
    return refunded?.transactionHash ?? undefined;
  }

  async latestBlockTimestamp(): Promise<bigint> {
    return (await this.clients.publicClient.getBlock({ blockTag: "latest" })).timestamp;
  }

  /** The JobOpened facts of a mined openJob. */
  openedJobOf(receipt: TransactionReceipt): OpenedJob | undefined {
    for (const log of receipt.logs) {
      if (log.address.toLowerCase() !== this.deployment.contracts.creditEscrow.toLowerCase()) continue;
      if (log.topics[0] !== TOPIC.jobOpened) continue;
      const event = jobOpenedData(log.data);
      return { balanceAfter: event.balanceAfter, creditsLocked: event.creditsLocked, deadline: event.deadline };
    }
    return undefined;
  }

  /** Each lock of a mined openJobBatch: its JobOpened facts or its JobOpenSkipped reason, by job id (lower-case). */
  lockOutcomesOf(receipt: TransactionReceipt): Map<string, LockOutcome> {
    const outcomes = new Map<string, LockOutcome>();
    for (const log of receipt.logs) {
      if (log.address.toLowerCase() !== this.deployment.contracts.creditEscrow.toLowerCase()) continue;
      if (log.topics[0] === TOPIC.jobOpened) {
        const event = jobOpenedData(log.data);
        outcomes.set(jobIdOf(log).toLowerCase(), {
          kind: "opened",
          balanceAfter: event.balanceAfter,
          creditsLocked: event.creditsLocked,
          deadline: event.deadline,
        });
      } else if (log.topics[0] === TOPIC.jobOpenSkipped) {
        outcomes.set(jobIdOf(log).toLowerCase(), {
          kind: "skipped",
          reason: OPEN_SKIP_REASONS[jobOpenSkippedData(log.data).reason] ?? "none",
          blockNumber: receipt.blockNumber,
        });
      }
    }
    return outcomes;
  }

  /** Job ids (lower-case) a mined settleBatch skipped (`SettlementSkipped`); those jobs are still open. */
  skippedJobsOf(receipt: TransactionReceipt): Set<string> {
    const skipped = new Set<string>();
    for (const log of receipt.logs) {
      if (log.address.toLowerCase() !== this.deployment.contracts.creditEscrow.toLowerCase()) continue;
      if (log.topics[0] !== TOPIC.settlementSkipped) continue;
      skipped.add(jobIdOf(log).toLowerCase());
    }
    return skipped;
  }

  /** The JobSettled facts for `jobKey` in a mined settle/settleBatch. */
  settledJobOf(receipt: TransactionReceipt, jobKey: Hex): { creditsCharged: bigint; balanceAfter: bigint } | undefined {
    const log = this.settledLogsOf(receipt).get(jobKey.toLowerCase());
    if (!log) return undefined;
    // Only this job's JobSettled is decoded.
    const event = jobSettledData(log.data);
    return { creditsCharged: event.creditsCharged, balanceAfter: event.balanceAfter };
  }

  /**
   * A settlement receipt's JobSettled logs by job id (lower-case; jobId is the first indexed topic), made once per
   * receipt: every job of a batch looks itself up in the same receipt, and scanning all its logs per job grew with
   * the square of the batch (issue 26).
   */
  private settledLogsOf(receipt: TransactionReceipt): Map<string, TransactionReceipt["logs"][number]> {
    let logs = this.settledLogs.get(receipt);
    if (!logs) {
      logs = new Map();
      const escrow = this.deployment.contracts.creditEscrow.toLowerCase();
      for (const log of receipt.logs) {
        const jobId = log.topics[1];
        if (log.topics[0] !== TOPIC.jobSettled || jobId === undefined || log.address.toLowerCase() !== escrow) continue;
        if (!logs.has(jobId.toLowerCase())) logs.set(jobId.toLowerCase(), log);
      }
      this.settledLogs.set(receipt, logs);
    }
    return logs;
  }
}
