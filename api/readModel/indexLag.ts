import type { Logger } from "pino";
import type { IndexReader } from "./indexReader.js";
import { withDeadline } from "../runtime/withDeadline.js";

/** The chain reads the monitor needs (EscrowChain provides them). */
export interface ChainHeadReader {
  blockNumber(): Promise<bigint>;
  blockTimestamp(blockNumber: bigint): Promise<bigint>;
}

export interface IndexLagSnapshot {
  /** Latest chain block seen, or undefined before the first answer. */
  chainHead: number | undefined;
  /** Last block the index reported as indexed (kept while the index is away). */
  indexedBlock: number | undefined;
  /** chainHead − indexedBlock (≥ 0), undefined while either is unknown. */
  lagBlocks: number | undefined;
  /** How long the oldest block the index is missing has existed (0 when caught up). */
  lagSeconds: number | undefined;
  /** Whether the last read of the index's status answered. */
  indexUp: boolean;
  /** Whether the last read of the chain head answered. */
  chainUp: boolean;
  /** When the last sample finished (ms since epoch). */
  sampledAt: number;
}

/**
 * Samples the index lag (chain head − indexed block) in the background, so /metrics, /readyz and the staleness
 * header of the read endpoints can use it without waiting on the chain or the index. While the index does not
 * answer, the lag keeps growing from its last known block as the chain moves on.
 */
export class IndexLagMonitor {
  private snapshotValue: IndexLagSnapshot = {
    chainHead: undefined,
    indexedBlock: undefined,
    lagBlocks: undefined,
    lagSeconds: undefined,
    indexUp: false,
    chainUp: false,
    sampledAt: 0,
  };
  private timer: NodeJS.Timeout | undefined;
  private sampling: Promise<void> | undefined;
  /** Timestamps of the blocks just after the indexed one, by number (one read per block, not per sample). */
  private readonly blockTimes = new Map<number, number>();

  constructor(
    private readonly chain: ChainHeadReader,
    private readonly index: IndexReader,
    private readonly options: { sampleMs: number; timeoutMs: number; logger?: Logger },
  ) {}

  start(): void {
    void this.sample();
    this.timer = setInterval(() => void this.sample(), this.options.sampleMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }

  snapshot(): IndexLagSnapshot {
    return this.snapshotValue;
  }

  /** One sample; concurrent callers share it. */
  sample(): Promise<void> {
    this.sampling ??= this.sampleOnce().finally(() => {
      this.sampling = undefined;
    });
    return this.sampling;
  }

  private async sampleOnce(): Promise<void> {
    const previous = this.snapshotValue;
    const [head, indexed] = await Promise.all([
      withDeadline(this.chain.blockNumber(), this.options.timeoutMs, "chain head").then(
        (value) => Number(value),
        () => undefined,
      ),
      this.index.indexedBlock().then(
        (value) => ({ ok: true as const, block: value?.number }),
        () => ({ ok: false as const, block: undefined }),
      ),
    ]);
    const chainHead = head ?? previous.chainHead;
    const indexedBlock = indexed.block ?? previous.indexedBlock;
    let lagBlocks: number | undefined;
    let lagSeconds: number | undefined;
    if (chainHead !== undefined && indexedBlock !== undefined) {
      lagBlocks = Math.max(0, chainHead - indexedBlock);
      lagSeconds = lagBlocks === 0 ? 0 : await this.ageOfBlock(indexedBlock + 1, previous);
    }
    if (indexed.ok !== previous.indexUp && previous.sampledAt > 0)
      this.options.logger?.warn({ index_up: indexed.ok, indexed_block: indexedBlock }, "index availability changed");
    this.snapshotValue = {
      chainHead,
      indexedBlock,
      lagBlocks,
      lagSeconds,
      indexUp: indexed.ok,
      chainUp: head !== undefined,
      sampledAt: Date.now(),
    };
  }

  /** Seconds since block `number` was mined; when it cannot be read, the previous lag plus the time since. */
  private async ageOfBlock(number: number, previous: IndexLagSnapshot): Promise<number | undefined> {
    let time = this.blockTimes.get(number);
    if (time === undefined) {
      try {
        time = Number(
          await withDeadline(this.chain.blockTimestamp(BigInt(number)), this.options.timeoutMs, "block time"),
        );
        this.blockTimes.clear();
        this.blockTimes.set(number, time);
      } catch {
        if (previous.lagSeconds === undefined) return undefined;
        return previous.lagSeconds + (Date.now() - previous.sampledAt) / 1000;
      }
    }
    return Math.max(0, Date.now() / 1000 - time);
  }
}
