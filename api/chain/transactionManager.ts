import type { Logger } from "pino";
import { blockHashAt } from "./blockHashAt.js";
import {
  parseTransaction,
  type Address,
  type Hex,
  type LocalAccount,
  type PublicClient,
  type TransactionReceipt,
} from "viem";
import { phaseTraceOn, traceTransaction } from "../observability/phaseTrace.js";
import { bumpedFees, capped, type FeeOracle, type Fees } from "./feeOracle.js";
import { keccak256Hex } from "./secp256k1.js";
import { RawTransactionError, type RawTransactionPipe } from "./rawTransactionPipe.js";
import type { StoredTransaction, TransactionLog } from "./transactionStore.js";

/** What the gateway asks the chain to run: a call, its gas limit (estimated or bounded by the caller). */
export interface TransactionRequest {
  to: Address;
  data: Hex;
  gas: bigint;
  /** What the call does, kept with the transaction for operators (the contract function's name). */
  purpose?: string;
}

export interface TransactionManagerOptions {
  chainId: number;
  account: LocalAccount;
  client: Pick<
    PublicClient,
    "request" | "getBlockNumber" | "getTransactionCount" | "getTransactionReceipt" | "getTransaction"
  >;
  pipe: Pick<RawTransactionPipe, "send">;
  fees: FeeOracle;
  /** The durable record of this signer's unfinished transactions (api/chain/transactionStore.ts). */
  log: TransactionLog;
  /** A transaction not mined this long after its last (re)broadcast is replaced with higher fees. */
  replaceAfterMs: number;
  /** Confirmations (blocks on top of the one that mined it, plus one) after which a transaction is final. */
  finalityDepth: number;
  /** Period of the watch over pending transactions. */
  monitorMs: number;
  /** While someone waits for a transaction, how often its receipt is looked for (faster than the watch). */
  receiptPollMs?: number;
  logger: Logger;
}

/** The state of the signer's pipeline, for /readyz and /metrics. */
export interface TransactionHealth {
  /** Transactions signed and not yet final (pending or mined too recently). */
  tracked: number;
  /** Transactions not mined yet. */
  pending: number;
  /** Age of the oldest transaction not mined yet, ms (0 when none). */
  oldestPendingAgeMs: number;
  /** Nonces below this signer's next one that the node neither mined nor holds (0 when none). */
  nonceGap: number;
  replacements: number;
  rebroadcasts: number;
  gapFills: number;
}

/** The node refused a transaction everywhere; its nonce is filled by a no-op, so it can never be mined later. */
export class TransactionNotSentError extends Error {
  override name = "TransactionNotSentError";
  constructor(
    message: string,
    override readonly cause: unknown,
  ) {
    super(message);
  }
}

/** Not mined in the time the caller gave; the manager keeps watching (and replacing) it all the same. */
export class WaitMinedTimeoutError extends Error {
  override name = "WaitMinedTimeoutError";
}

/** Another transaction (a cancel, an operator's script) took this transaction's nonce. */
export class TransactionReplacedError extends Error {
  override name = "TransactionReplacedError";
}

interface Attempt {
  hash: Hex;
  /** "0x" for the older versions of a transaction reloaded after a restart: only the last one is broadcast. */
  raw: Hex;
  fees: Fees;
  sentAt: number;
}

interface Tracked {
  nonce: number;
  request: TransactionRequest;
  /** Every signed version at this nonce, oldest first; the last is the one broadcast now. */
  attempts: Attempt[];
  createdAt: number;
  /** A no-op filling the nonce of a transaction that could not be sent. */
  filler: boolean;
  mined?: { hash: Hex; blockNumber: bigint; blockHash: Hex };
  /** Someone waits for its receipt until then (ms): the shared receipt poll looks for it. */
  waitedUntil?: number;
  /** The head block at which its receipt was last looked for and not found. */
  lookedAtHead?: bigint;
  /** Ticks in which the nonce was used on chain by none of our versions (a lookup race needs two). */
  lostTicks: number;
  receipt: PromiseWithResolvers<TransactionReceipt>;
}

const FILLER_GAS = 21_000n;
/** While receipts are not there at once (a chain with block times), one wait in this many still looks at once. */
const RECEIPT_PROBE_EVERY = 16;
const FILLER_PURPOSE = "no-op";
/** Nonce-too-low and fee refusals, as geth, Hardhat (EDR), anvil and reth word them. */
const NONCE_TOO_LOW = /nonce too low|nonce has already been used|NonceTooLow/i;
const FEE_REFUSED =
  /underpriced|fee too low|too low for the next block|max fee per gas less than block base fee|feecap/i;

/**
 * The gateway signer's transactions, from signing until final (docs/DESIGN.md "Transactions"). One local nonce
 * counter serialises signing; every signed transaction is kept with its bytes, nonce and fees, and a watch every
 * `monitorMs` compares them with the chain:
 * - mined: its receipt resolves `waitMined`; it is forgotten `finalityDepth` blocks later, and a reorg that removes
 *   it before then puts it back to pending;
 * - pending and unknown to the node (dropped, or orphaned by a reorg): the same bytes are broadcast again;
 * - pending longer than `replaceAfterMs`: replaced at the same nonce with fees ≥ 12.5% higher, up to the cap;
 * - a nonce below the next one that nothing of ours holds (a gap): filled with a no-op.
 * A transaction the nodes refused outright is turned into a no-op at its nonce, so the later ones are not stuck
 * behind a hole and the refused call can never land after its caller was told it failed.
 * Every tracked transaction is also kept in the database (`log`), written before its bytes leave and removed once
 * final, so a restarted gateway reloads them in `start` and the first watch repairs what happened meanwhile.
 */
export class TransactionManager {
  private readonly tracked = new Map<number, Tracked>();
  private readonly byHash = new Map<string, Tracked>();
  private nextNonce: number | undefined;
  private signing: Promise<unknown> = Promise.resolve();
  private timer: NodeJS.Timeout | undefined;
  private ticking: Promise<void> | undefined;
  private lastGap = 0;
  private unknownThisTick = 0;
  /** When the last watch pass began (undefined before the first). */
  private lastPassAt: number | undefined;
  private gapSince: number | undefined;
  private counters = { replacements: 0, rebroadcasts: 0, gapFills: 0 };
  /** Transactions someone waits for, not mined yet: one shared poll looks for their receipts. */
  private readonly waited = new Set<Tracked>();
  private polling: Promise<void> | undefined;
  /** The newest head block number the receipt poll has seen. */
  private polledHead: bigint | undefined;
  /** Whether the last look for a receipt right after sending found it (automine): then every wait looks at once. */
  private receiptsAtOnce = true;
  private sinceProbe = 0;

  constructor(private readonly options: TransactionManagerOptions) {}

  get address(): Address {
    return this.options.account.address;
  }

  /**
   * Reloads this signer's unfinished transactions from the log, runs one watch over them at once (broadcasting
   * again what the node lost, filling nonce gaps, replacing what waited too long), then keeps watching.
   */
  async start(): Promise<void> {
    if (this.timer) return;
    for (const row of await this.options.log.load()) this.restore(row);
    if (this.tracked.size > 0)
      this.options.logger.info({ transactions: this.tracked.size }, "unfinished transactions reloaded");
    await this.tick();
    this.timer ??= setInterval(() => void this.tick(), this.options.monitorMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.ticking;
    // Finalised transactions still queued leave the log now (a failure only means the next start finalises them).
    await this.options.log.flush().catch(() => undefined);
  }

  /**
   * Signs `request` at the next nonce and broadcasts it; resolves with its hash once a node accepted it. Rejects
   * with the node's RawTransactionError when it reverted while being mined (automine), or with
   * TransactionNotSentError when every node refused it (its nonce is then filled by a no-op).
   *
   * `onSigned` is told the hash as soon as the transaction is signed at its nonce, before it is recorded and
   * broadcast (the lock's job is routed then: openEscrow.ts). The hash it resolves with is the one a node took,
   * which differs only when the nodes made it re-sign (another sender at the nonce, fees below the node's floor).
   */
  async send(request: TransactionRequest, onSigned?: (hash: Hex) => void): Promise<Hex> {
    const began = phaseTraceOn ? performance.now() : 0;
    const fees = await this.options.fees.fees();
    const feesAt = phaseTraceOn ? performance.now() : 0;
    for (let attempt = 0; ; attempt++) {
      const entry = await this.serialised(async () => {
        this.nextNonce ??= await this.firstFreeNonce();
        const nonce = this.nextNonce;
        const signed = await this.sign(nonce, request, fees);
        this.nextNonce = nonce + 1;
        return this.track(nonce, request, signed, false);
      });
      if (attempt === 0) onSigned?.(entry.attempts[0]!.hash);
      const signedAt = phaseTraceOn ? performance.now() : 0;
      try {
        // Written before any node sees the bytes, so a restart finds every transaction that may be mined.
        await this.persist(entry);
      } catch (error) {
        // Never broadcast: its nonce is a gap the watch fills.
        this.forget(entry);
        throw new TransactionNotSentError(`transaction at nonce ${entry.nonce} could not be recorded`, error);
      }
      try {
        const persistedAt = phaseTraceOn ? performance.now() : 0;
        const hash = await this.broadcast(entry.attempts[0]!);
        if (phaseTraceOn) {
          const now = performance.now();
          traceTransaction(hash, {
            fees: feesAt - began,
            sign: signedAt - feesAt,
            persist: persistedAt - signedAt,
            broadcast: now - persistedAt,
          });
        }
        return hash;
      } catch (error) {
        const message = (error as Error).message;
        if (error instanceof RawTransactionError && error.data && error.data !== "0x") throw error; // mined, reverted
        if (NONCE_TOO_LOW.test(message) && attempt === 0) {
          // Our own copy got there first (an endpoint answered late, or another endpoint passed it on): sent.
          const ours = await this.options.client.getTransaction({ hash: entry.attempts[0]!.hash }).then(
            () => true,
            () => false,
          );
          if (ours) return entry.attempts[0]!.hash;
          // Another sender used this nonce: nothing of ours is at it. Resynchronise and sign again.
          this.forget(entry);
          await this.serialised(async () => (this.nextNonce = undefined));
          continue;
        }
        if (FEE_REFUSED.test(message)) {
          const retried = await this.replace(entry, await this.options.fees.fees(true)).catch(() => undefined);
          if (retried) return retried;
        }
        await this.toFiller(entry);
        throw new TransactionNotSentError(
          `no node accepted the transaction at nonce ${entry.nonce}: ${message}`,
          error,
        );
      }
    }
  }

  /**
   * The receipt of the transaction sent as `hash`, or of the replacement that was mined in its place. Rejects with
   * TransactionReplacedError when something else took its nonce.
   */
  waitMined(hash: Hex, timeoutMs: number): Promise<TransactionReceipt> {
    const entry = this.byHash.get(hash.toLowerCase());
    const deadline = Date.now() + timeoutMs;
    if (entry) void this.pollReceipt(entry, deadline);
    const receipt = entry ? entry.receipt.promise : this.receiptOf(hash, deadline);
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new WaitMinedTimeoutError(`transaction ${hash} not mined within ${timeoutMs} ms`)),
        timeoutMs,
      );
    });
    return Promise.race([receipt, timeout]).finally(() => clearTimeout(timer));
  }

  health(now = Date.now()): TransactionHealth {
    let pending = 0;
    let oldest = now;
    for (const entry of this.tracked.values()) {
      if (entry.mined) continue;
      pending++;
      if (entry.createdAt < oldest) oldest = entry.createdAt;
    }
    return {
      tracked: this.tracked.size,
      pending,
      oldestPendingAgeMs: now - oldest,
      nonceGap: this.lastGap,
      ...this.counters,
    };
  }

  /** One pass of the watch (the interval runs it; tests call it directly). Never overlaps itself. */
  tick(): Promise<void> {
    this.ticking ??= this.watch()
      .catch((error: unknown) =>
        this.options.logger.warn({ err: error }, "transaction watch failed; next tick retries"),
      )
      .finally(() => (this.ticking = undefined));
    return this.ticking;
  }

  private async watch(): Promise<void> {
    const { client } = this.options;
    const [head, minedNonce] = await Promise.all([
      client.getBlockNumber({ cacheTime: 0 }),
      client.getTransactionCount({ address: this.address, blockTag: "latest" }),
    ]);
    if (this.nextNonce !== undefined && minedNonce > this.nextNonce) {
      // Someone else signed with this key: continue after their transactions.
      await this.serialised(async () => (this.nextNonce = undefined));
    }
    const now = Date.now();
    const previousPassAt = this.lastPassAt;
    this.lastPassAt = now;
    this.unknownThisTick = 0;
    const canonical = await this.canonicalHashes(head);
    for (const entry of [...this.tracked.values()].sort((a, b) => a.nonce - b.nonce)) {
      await this.watchOne(entry, head, minedNonce, now, canonical, previousPassAt);
    }
    await this.fillGaps(minedNonce, now);
    // The pass's finalised and forgotten transactions leave the log in one commit.
    await this.options.log.flush();
  }

  /** The nonce after everything the node holds and everything we track (the node may have lost some of ours). */
  private async firstFreeNonce(): Promise<number> {
    const pending = await this.options.client.getTransactionCount({ address: this.address, blockTag: "pending" });
    let next = pending;
    for (const nonce of this.tracked.keys()) if (nonce + 1 > next) next = nonce + 1;
    return next;
  }

  /**
   * The hash of each block that holds a mined transaction of ours, as the chain has it now: one block read per
   * block rather than one receipt per transaction (a block of the 1 s chain holds many of our batches, each kept
   * TX_MIN_KEEP_BLOCKS blocks). A block whose hash differs (or that could not be read) sends its transactions
   * through the receipt check below.
   */
  private async canonicalHashes(head: bigint): Promise<Map<bigint, Hex | undefined>> {
    const heights = new Set<bigint>();
    for (const entry of this.tracked.values())
      if (entry.mined && entry.mined.blockNumber <= head) heights.add(entry.mined.blockNumber);
    const hashes = new Map<bigint, Hex | undefined>();
    await Promise.all(
      [...heights].map(async (blockNumber) => {
        hashes.set(blockNumber, await blockHashAt(this.options.client, blockNumber).catch(() => undefined));
      }),
    );
    return hashes;
  }

  private async watchOne(
    entry: Tracked,
    head: bigint,
    minedNonce: number,
    now: number,
    canonical: ReadonlyMap<bigint, Hex | undefined>,
    previousPassAt: number | undefined,
  ): Promise<void> {
    const { client, logger } = this.options;
    if (entry.mined && canonical.get(entry.mined.blockNumber) === entry.mined.blockHash) {
      // Its block is still the chain's at that height, so the transaction is still mined there.
      if (head - entry.mined.blockNumber + 1n >= BigInt(this.options.finalityDepth)) this.forget(entry);
      return;
    }
    if (entry.mined) {
      const receipt = await client.getTransactionReceipt({ hash: entry.mined.hash }).catch(() => undefined);
      if (!receipt || receipt.blockHash !== entry.mined.blockHash) {
        // A reorg took the block; the transaction is pending again (the node may still hold it, else rebroadcast).
        logger.warn({ nonce: entry.nonce, tx: entry.mined.hash }, "transaction orphaned by a reorg");
        delete entry.mined;
        if (receipt) {
          this.markMined(entry, receipt);
          return;
        }
      } else {
        if (head - receipt.blockNumber + 1n >= BigInt(this.options.finalityDepth)) this.forget(entry);
        return;
      }
    }
    if (entry.nonce < minedNonce) {
      // Its nonce is used on chain: by one of our versions, normally.
      for (const attempt of [...entry.attempts].reverse()) {
        const receipt = await client.getTransactionReceipt({ hash: attempt.hash }).catch(() => undefined);
        if (receipt) {
          this.markMined(entry, receipt);
          return;
        }
      }
      // The nonce is used on chain, by none of our versions (after two looks: a receipt may lag the nonce).
      if (++entry.lostTicks >= 2) {
        logger.warn({ nonce: entry.nonce }, "transaction nonce taken by another transaction");
        entry.receipt.reject(new TransactionReplacedError(`nonce ${entry.nonce} was used by another transaction`));
        this.forget(entry);
      }
      return;
    }
    const latest = entry.attempts.at(-1)!;
    // A version sent since the previous pass began is not asked after yet: on a chain with block times most of a
    // pass's pending transactions are that young, and the look cost an RPC call each, about one per job at light
    // load (issue 26). A node that dropped it is found out by the next pass.
    const known =
      (previousPassAt !== undefined && latest.sentAt >= previousPassAt) ||
      (await client.getTransaction({ hash: latest.hash }).then(
        () => true,
        () => false,
      ));
    if (!known) this.unknownThisTick++;
    if (now - latest.sentAt >= this.options.replaceAfterMs) {
      const replaced = await this.replace(entry, await this.options.fees.fees(true)).catch((error: unknown) => {
        logger.warn({ err: error, nonce: entry.nonce }, "replacement refused");
        return undefined;
      });
      if (replaced) return;
    }
    if (!known) {
      logger.warn({ nonce: entry.nonce, tx: latest.hash }, "transaction unknown to the node; broadcasting again");
      this.counters.rebroadcasts++;
      await this.broadcast(latest).catch((error: unknown) =>
        logger.warn({ err: error, nonce: entry.nonce }, "rebroadcast refused"),
      );
    }
  }

  /**
   * Nonces from the last mined one up to our next that nothing tracked holds. One at or above the node's pending
   * nonce holds nothing at all (a transaction never recorded, or lost by the node and by us): it blocks every later
   * one and is filled with a no-op at once. One below it holds a transaction we have no record of (another process
   * signing with this key, an operator's script): after `replaceAfterMs` without progress it is filled with a no-op
   * at fees that outbid whatever sits there.
   */
  private async fillGaps(minedNonce: number, now: number): Promise<void> {
    if (this.nextNonce !== undefined && this.tracksEveryNonce(minedNonce, this.nextNonce)) {
      // The common pass: every nonce from the last mined one to our next is ours, so there is no gap and the node's
      // pending nonce is not asked. On Hardhat's node a "pending" read builds the pending block, running every
      // transaction in the pool: about 25 ms of the node's CPU each under the bench's load on the 1 s chain, where
      // one a pass (about one a second) came to some 0.15 ms of its CPU per job (issue 26).
      this.lastGap = this.unknownThisTick;
      this.gapSince = undefined;
      return;
    }
    const pendingNonce = await this.options.client.getTransactionCount({ address: this.address, blockTag: "pending" });
    const next = Math.max(this.nextNonce ?? pendingNonce, this.highestTracked() + 1);
    const missing: number[] = [];
    for (let nonce = minedNonce; nonce < next; nonce++) if (!this.tracked.has(nonce)) missing.push(nonce);
    // Nonces below our next that the node holds nothing of ours for (before this tick's repairs).
    this.lastGap = missing.length + this.unknownThisTick;
    const empty = missing.filter((nonce) => nonce >= pendingNonce);
    const held = missing.filter((nonce) => nonce < pendingNonce);
    if (held.length === 0) this.gapSince = undefined;
    else this.gapSince ??= now;
    const waited = this.gapSince !== undefined && now - this.gapSince >= this.options.replaceAfterMs;
    const toFill = waited ? missing : empty;
    if (toFill.length === 0) return;
    const fees = await this.options.fees.fees(true);
    for (const nonce of toFill) {
      this.options.logger.warn({ nonce }, "nonce gap; filling it with a no-op");
      this.counters.gapFills++;
      const boosted = capped(
        { maxFeePerGas: fees.maxFeePerGas * 2n, maxPriorityFeePerGas: fees.maxPriorityFeePerGas * 2n + 1n },
        this.options.fees.cap,
      );
      const signed = await this.sign(nonce, this.fillerRequest(), boosted);
      const entry = this.track(nonce, this.fillerRequest(), signed, true);
      try {
        await this.persist(entry);
      } catch (error) {
        this.forget(entry);
        this.options.logger.warn({ err: error, nonce }, "gap filler not recorded; the next tick retries");
        continue;
      }
      await this.broadcast(signed).catch((error: unknown) =>
        this.options.logger.warn({ err: error, nonce }, "gap filler refused; the next tick retries"),
      );
    }
    if (waited) this.gapSince = undefined;
  }

  /** Whether every nonce from `from` up to (not including) `next`, and any tracked above it, is tracked. */
  private tracksEveryNonce(from: number, next: number): boolean {
    const to = Math.max(next, this.highestTracked() + 1);
    for (let nonce = from; nonce < to; nonce++) if (!this.tracked.has(nonce)) return false;
    return true;
  }

  private highestTracked(): number {
    let highest = -1;
    for (const nonce of this.tracked.keys()) if (nonce > highest) highest = nonce;
    return highest;
  }

  /** Signs a new version at the entry's nonce with `fees` bumped over its last; undefined when the cap forbids. */
  private async replace(entry: Tracked, current: Fees): Promise<Hex | undefined> {
    const latest = entry.attempts.at(-1)!;
    const fees = bumpedFees(latest.fees, current, this.options.fees.cap);
    if (!fees) return undefined;
    const signed = await this.sign(entry.nonce, entry.request, fees);
    // Recorded before it leaves: a restart must know every version that may be mined.
    entry.attempts.push(signed);
    this.byHash.set(signed.hash.toLowerCase(), entry);
    await this.persist(entry).catch((error: unknown) => {
      this.dropLatest(entry, signed);
      throw error;
    });
    let hash: Hex;
    try {
      hash = await this.broadcast(signed);
    } catch (error) {
      // Refused: the previous version is still the one nodes hold (its row is restored in this pass's commit).
      this.dropLatest(entry, signed);
      void this.persist(entry).catch(() => undefined);
      throw error;
    }
    this.counters.replacements++;
    this.options.logger.info(
      { nonce: entry.nonce, tx: signed.hash, replaces: latest.hash, maxFeePerGas: String(fees.maxFeePerGas) },
      entry.filler ? "no-op replaced with higher fees" : "transaction replaced with higher fees",
    );
    return hash;
  }

  /** The entry's nonce is kept, its call dropped: a no-op (0 to itself) outbidding whatever version a node holds. */
  private async toFiller(entry: Tracked): Promise<void> {
    entry.filler = true;
    // The row keeps what the nonce was for; the no-op is what may be mined there now.
    entry.request = { ...this.fillerRequest(), purpose: entry.request.purpose ?? FILLER_PURPOSE };
    entry.receipt.reject(new TransactionNotSentError(`transaction at nonce ${entry.nonce} was not sent`, undefined));
    const current = await this.options.fees.fees(true).catch(() => entry.attempts.at(-1)!.fees);
    const fees = bumpedFees(entry.attempts.at(-1)!.fees, current, this.options.fees.cap) ?? entry.attempts.at(-1)!.fees;
    const signed = await this.sign(entry.nonce, entry.request, fees);
    entry.attempts.push(signed);
    this.byHash.set(signed.hash.toLowerCase(), entry);
    // Recorded before it leaves; if the record fails the watch still holds it in memory and rebroadcasts it.
    await this.persist(entry).catch((error: unknown) =>
      this.options.logger.warn({ err: error, nonce: entry.nonce }, "no-op not recorded"),
    );
    // The watch broadcasts it again if this one is refused too (e.g. the base fee is above the cap for now).
    await this.broadcast(signed).catch(() => undefined);
  }

  private dropLatest(entry: Tracked, attempt: Attempt): void {
    if (entry.attempts.at(-1) === attempt) entry.attempts.pop();
    if (this.byHash.get(attempt.hash.toLowerCase()) === entry) this.byHash.delete(attempt.hash.toLowerCase());
  }

  private persist(entry: Tracked): Promise<void> {
    return this.options.log.save(this.rowOf(entry));
  }

  private rowOf(entry: Tracked): StoredTransaction {
    const latest = entry.attempts.at(-1)!;
    return {
      nonce: entry.nonce,
      purpose: entry.request.purpose ?? "call",
      filler: entry.filler,
      raw: latest.raw,
      fees: latest.fees,
      hashes: entry.attempts.map((attempt) => attempt.hash),
      sentAt: entry.createdAt,
      ...(entry.attempts.length > 1 ? { replacedAt: latest.sentAt } : {}),
    };
  }

  /** A transaction of a previous run, from its row: pending until the watch finds it mined. */
  private restore(row: StoredTransaction): void {
    const parsed = parseTransaction(row.raw);
    const request: TransactionRequest = {
      to: parsed.to ?? this.address,
      data: parsed.data ?? "0x",
      gas: parsed.gas ?? FILLER_GAS,
      purpose: row.purpose,
    };
    const sentAt = row.replacedAt ?? row.sentAt;
    const attempts: Attempt[] = row.hashes.map((hash, index) =>
      index === row.hashes.length - 1
        ? { hash, raw: row.raw, fees: row.fees, sentAt }
        : { hash, raw: "0x", fees: row.fees, sentAt },
    );
    const entry = this.track(row.nonce, request, attempts[0]!, row.filler);
    entry.createdAt = row.sentAt;
    entry.attempts = attempts;
    for (const attempt of attempts) this.byHash.set(attempt.hash.toLowerCase(), entry);
  }

  private fillerRequest(): TransactionRequest {
    return { to: this.address, data: "0x", gas: FILLER_GAS, purpose: FILLER_PURPOSE };
  }

  private async sign(nonce: number, request: TransactionRequest, fees: Fees): Promise<Attempt> {
    const { account, chainId } = this.options;
    if (!account.signTransaction) throw new Error("the gateway account must be a local account");
    const raw = await account.signTransaction({
      type: "eip1559",
      chainId,
      to: request.to,
      data: request.data,
      gas: request.gas,
      nonce,
      value: 0n,
      ...fees,
    });
    return { hash: keccak256Hex(raw), raw, fees, sentAt: Date.now() };
  }

  private track(nonce: number, request: TransactionRequest, first: Attempt, filler: boolean): Tracked {
    const previous = this.tracked.get(nonce);
    if (previous) this.forget(previous);
    const entry: Tracked = {
      nonce,
      request,
      attempts: [first],
      createdAt: Date.now(),
      filler,
      lostTicks: 0,
      receipt: Promise.withResolvers(),
    };
    // Nobody may be waiting; never an unhandled rejection.
    entry.receipt.promise.catch(() => undefined);
    this.tracked.set(nonce, entry);
    this.byHash.set(first.hash.toLowerCase(), entry);
    return entry;
  }

  private markMined(entry: Tracked, receipt: TransactionReceipt): void {
    entry.mined = { hash: receipt.transactionHash, blockNumber: receipt.blockNumber, blockHash: receipt.blockHash };
    entry.lostTicks = 0;
    if (entry.filler)
      entry.receipt.reject(new TransactionNotSentError(`nonce ${entry.nonce} holds a no-op`, undefined));
    else entry.receipt.resolve(receipt);
  }

  private forget(entry: Tracked): void {
    if (this.tracked.get(entry.nonce) === entry) {
      this.tracked.delete(entry.nonce);
      // Leaves the log with the watch pass's commit (or before the save of a new transaction at the same nonce).
      this.options.log.remove(entry.nonce);
    }
    for (const attempt of entry.attempts) {
      if (this.byHash.get(attempt.hash.toLowerCase()) === entry) this.byHash.delete(attempt.hash.toLowerCase());
    }
  }

  private async broadcast(attempt: Attempt): Promise<Hex> {
    attempt.sentAt = Date.now();
    await this.options.pipe.send(attempt.raw);
    return attempt.hash;
  }

  /**
   * Looks for the receipt of any version of `entry` at once, then, until one is mined or `deadline`, again at each
   * new block: one receipt poll shared by every waiter reads the head every `receiptPollMs` and looks up only the
   * waited transactions not yet looked for at that head (the watch also finds them, less often). A poll per waiter
   * looked up every pending transaction four times a second, most of the chain's RPC calls on a 1 s chain.
   */
  private pollReceipt(entry: Tracked, deadline: number): void {
    entry.waitedUntil = Math.max(entry.waitedUntil ?? 0, deadline);
    if (this.waited.has(entry) || entry.mined) return;
    this.waited.add(entry);
    // On a chain with block times a transaction just sent cannot have a receipt yet: its first look is then the
    // poll's at the next head, save for one probe in RECEIPT_PROBE_EVERY, whose hit (automine again) brings the
    // looks at once back.
    const now = this.receiptsAtOnce || ++this.sinceProbe >= RECEIPT_PROBE_EVERY;
    const first = now
      ? this.lookUp(entry, this.polledHead).then((found) => {
          this.sinceProbe = 0;
          this.receiptsAtOnce = found;
        })
      : Promise.resolve((entry.lookedAtHead = this.polledHead));
    void first.then(() => {
      this.polling ??= this.pollWaited().finally(() => (this.polling = undefined));
    });
  }

  private async pollWaited(): Promise<void> {
    while (this.waited.size > 0) {
      await new Promise((resolve) => setTimeout(resolve, this.options.receiptPollMs ?? 250));
      const head = await this.options.client.getBlockNumber({ cacheTime: 0 }).catch(() => undefined);
      if (head !== undefined) this.polledHead = head;
      // Looked for at this head already and not found: nothing new can hold it until the next block.
      await Promise.all(
        [...this.waited].map((entry) =>
          head !== undefined && entry.lookedAtHead === head ? undefined : this.lookUp(entry, head),
        ),
      );
    }
  }

  /**
   * One look for `entry`'s receipt (any version, newest first); `head` is a block at or below the chain's now.
   * Whether the entry is mined (or no longer waited for) after it.
   */
  private async lookUp(entry: Tracked, head: bigint | undefined): Promise<boolean> {
    if (entry.mined || this.tracked.get(entry.nonce) !== entry || Date.now() >= (entry.waitedUntil ?? 0)) {
      this.waited.delete(entry);
      return true;
    }
    for (const attempt of [...entry.attempts].reverse()) {
      const receipt = await this.options.client.getTransactionReceipt({ hash: attempt.hash }).catch(() => undefined);
      if (receipt) {
        if (!entry.mined) this.markMined(entry, receipt);
        this.waited.delete(entry);
        return true;
      }
    }
    entry.lookedAtHead = head;
    return false;
  }

  /** A transaction this manager does not (or no longer) track: poll its receipt. */
  private async receiptOf(hash: Hex, deadline: number): Promise<TransactionReceipt> {
    while (Date.now() < deadline) {
      const receipt = await this.options.client.getTransactionReceipt({ hash }).catch(() => undefined);
      if (receipt) return receipt;
      await new Promise((resolve) => setTimeout(resolve, this.options.receiptPollMs ?? 250));
    }
    throw new WaitMinedTimeoutError(`transaction ${hash} not mined in time`);
  }

  private serialised<T>(task: () => Promise<T>): Promise<T> {
    const run = this.signing.then(task, task);
    this.signing = run.catch(() => undefined);
    return run;
  }
}
