import type { PublicClient } from "viem";

export interface Fees {
  maxFeePerGas: bigint;
  maxPriorityFeePerGas: bigint;
}

export interface FeeOracleOptions {
  /** The operator's cap on maxFeePerGas (TX_MAX_FEE_PER_GAS_GWEI): no transaction, nor replacement, pays more. */
  maxFeePerGas: bigint;
  /** Floor of the priority fee (chains whose blocks carry no tips report 0). */
  minPriorityFeePerGas: bigint;
  /** How long one reading serves every transaction signed meanwhile. */
  ttlMs?: number;
}

/** A reading up to this many `ttlMs` old is served while a new one is taken; an older one is waited for. */
const STALE_LIMIT = 10;

/** Blocks of `eth_feeHistory` read for the tip. */
const HISTORY_BLOCKS = 5;

/**
 * EIP-1559 fees from `eth_feeHistory`: the next block's base fee (the history's last entry) with headroom for six
 * full blocks in a row (+12.5% each, about ×2), plus the median tip of recent blocks. The cap is applied last; a
 * base fee above the cap leaves the transaction waiting in the mempool, and the transaction manager replaces it once
 * the base fee is back under the cap.
 */
export class FeeOracle {
  /** The last reading and when it was taken. */
  private last: { at: number; fees: Fees } | undefined;
  /** The reading in flight, shared by every caller meanwhile. */
  private reading: Promise<Fees> | undefined;

  constructor(
    private readonly client: Pick<PublicClient, "getFeeHistory">,
    private readonly options: FeeOracleOptions,
  ) {}

  get cap(): bigint {
    return this.options.maxFeePerGas;
  }

  /**
   * The current fees. A reading older than `ttlMs` is still served while a new one is taken in the background
   * (issue 26: a lock batch waited for an `eth_feeHistory` round trip once a second, behind the node's mining); one
   * older than STALE_LIMIT readings is not, nor is any when `refresh` asks for a fresh one (a replacement, a
   * transaction refused for its fees).
   */
  fees(refresh = false): Promise<Fees> {
    const ttl = this.options.ttlMs ?? 1_000;
    const age = this.last ? Date.now() - this.last.at : Infinity;
    if (refresh || age > ttl) {
      const reading = refresh || !this.reading ? this.startReading() : this.reading;
      if (refresh || age > ttl * STALE_LIMIT) return reading;
    }
    return Promise.resolve(this.last!.fees);
  }

  private startReading(): Promise<Fees> {
    const reading = this.read().then((fees) => {
      this.last = { at: Date.now(), fees };
      return fees;
    });
    this.reading = reading;
    // A failed reading is not served to anyone else: the next caller tries again.
    void reading.then(
      () => (this.reading === reading ? (this.reading = undefined) : undefined),
      () => (this.reading === reading ? (this.reading = undefined) : undefined),
    );
    return reading;
  }

  private async read(): Promise<Fees> {
    const history = await this.client.getFeeHistory({
      blockCount: HISTORY_BLOCKS,
      blockTag: "latest",
      rewardPercentiles: [50],
    });
    const nextBase = history.baseFeePerGas.at(-1) ?? 0n;
    const tips = (history.reward ?? []).map((row) => row[0] ?? 0n).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    const median = tips[Math.floor(tips.length / 2)] ?? 0n;
    const tip = median > this.options.minPriorityFeePerGas ? median : this.options.minPriorityFeePerGas;
    return capped({ maxFeePerGas: nextBase * 2n + tip, maxPriorityFeePerGas: tip }, this.options.maxFeePerGas);
  }
}

/** Fees no higher than the cap (the tip never above the fee cap, as EIP-1559 requires). */
export function capped(fees: Fees, cap: bigint): Fees {
  const maxFeePerGas = fees.maxFeePerGas > cap ? cap : fees.maxFeePerGas;
  const maxPriorityFeePerGas = fees.maxPriorityFeePerGas > maxFeePerGas ? maxFeePerGas : fees.maxPriorityFeePerGas;
  return { maxFeePerGas, maxPriorityFeePerGas };
}

/**
 * The fees of a replacement at the same nonce: at least 12.5% over the previous on both fields (geth needs 10%,
 * some nodes 12.5%), or the current reading if higher, then capped. `undefined` when the cap leaves no room for the
 * bump: the node would refuse the replacement, so the old transaction is rebroadcast instead.
 */
export function bumpedFees(previous: Fees, current: Fees, cap: bigint): Fees | undefined {
  const bump = (value: bigint) => value + value / 8n + 1n;
  const max = (a: bigint, b: bigint) => (a > b ? a : b);
  const wanted = {
    maxFeePerGas: max(bump(previous.maxFeePerGas), current.maxFeePerGas),
    maxPriorityFeePerGas: max(bump(previous.maxPriorityFeePerGas), current.maxPriorityFeePerGas),
  };
  const fees = capped(wanted, cap);
  if (
    fees.maxFeePerGas < bump(previous.maxFeePerGas) ||
    fees.maxPriorityFeePerGas < bump(previous.maxPriorityFeePerGas)
  )
    return undefined;
  return fees;
}
