import { describe, expect, it } from "vitest";

// The patched Ponder's realtime buffer (patches/ponder+0.16.10.patch, `bufferAndMergeBlocks`; indexer/README.md
// "Blocks that waited, in one transaction"): the block events of one chain already waiting leave as one event, so
// they are indexed in one database transaction. Driven here with hand-made events; the projection suite checks the
// same against a real chain and database.

type BlockEvent = {
  type: "block";
  chain: { id: number };
  checkpoint: string;
  events: string[];
  blockCallback?: (isAccepted: boolean) => void;
};
type OtherEvent = { type: "reorg" | "finalize"; chain: { id: number }; checkpoint: string };
type RealtimeEvent = BlockEvent | OtherEvent;
type Merge = (
  source: AsyncGenerator<RealtimeEvent>,
  size: number,
  bufferCallback?: (size: number) => void,
) => AsyncGenerator<RealtimeEvent>;

// Not in Ponder's package exports: loaded by its path, as the patched file `ponder start` runs.
const modulePath = new URL("../../node_modules/ponder/dist/esm/runtime/multichain.js", import.meta.url).href;
const { bufferAndMergeBlocks } = (await import(modulePath)) as { bufferAndMergeBlocks: Merge };

const MAX_MERGED_BLOCKS = 50;

function block(number: number, chainId = 1, accepted?: number[]): BlockEvent {
  return {
    type: "block",
    chain: { id: chainId },
    checkpoint: `cp${String(number).padStart(4, "0")}`,
    events: [`event of block ${number}`],
    blockCallback: () => accepted?.push(number),
  };
}

/** A source that yields `first` at once and `rest` only once `release` is called. */
function gated(first: RealtimeEvent, rest: RealtimeEvent[]) {
  const gate = Promise.withResolvers<void>();
  async function* source(): AsyncGenerator<RealtimeEvent> {
    yield first;
    await gate.promise;
    yield* rest;
  }
  return { source: source(), release: () => gate.resolve() };
}

/** Takes the first event, lets `rest` queue up behind it (as while that block is indexed), then reads the rest. */
async function afterTheFirst(first: RealtimeEvent, rest: RealtimeEvent[]): Promise<RealtimeEvent[]> {
  const { source, release } = gated(first, rest);
  const merged = bufferAndMergeBlocks(source, 100);
  const out: RealtimeEvent[] = [(await merged.next()).value as RealtimeEvent];
  release();
  await new Promise((resolve) => setTimeout(resolve, 20));
  for await (const event of merged) out.push(event);
  return out;
}

describe("the realtime buffer (patched Ponder)", () => {
  it("lets the blocks of one chain waiting in the buffer leave as one event, with the last block's checkpoint", async () => {
    const accepted: number[] = [];
    const out = await afterTheFirst(
      block(1, 1, accepted),
      [2, 3, 4].map((n) => block(n, 1, accepted)),
    );

    expect(out).toHaveLength(2);
    const group = out[1] as BlockEvent;
    expect(group.checkpoint).toBe("cp0004");
    expect(group.events).toEqual(["event of block 2", "event of block 3", "event of block 4"]);
    group.blockCallback?.(true);
    expect(accepted).toEqual([2, 3, 4]);
  });

  it("hands out a block that arrives alone at once", async () => {
    const { source, release } = gated(block(1), [block(2)]);
    const merged = bufferAndMergeBlocks(source, 100);

    const first = (await merged.next()).value as BlockEvent;
    expect(first.checkpoint).toBe("cp0001");
    expect(first.events).toEqual(["event of block 1"]);
    release();
    expect(((await merged.next()).value as BlockEvent).checkpoint).toBe("cp0002");
  });

  it("ends a group at a reorg or a finalize event, which leave on their own and in order", async () => {
    const reorg: OtherEvent = { type: "reorg", chain: { id: 1 }, checkpoint: "cp0002" };
    const finalize: OtherEvent = { type: "finalize", chain: { id: 1 }, checkpoint: "cp0001" };
    const out = await afterTheFirst(block(1), [block(2), block(3), reorg, block(4), finalize, block(5), block(6)]);

    expect(out.map((event) => `${event.type}:${event.checkpoint}`)).toEqual([
      "block:cp0001",
      "block:cp0003",
      "reorg:cp0002",
      "block:cp0004",
      "finalize:cp0001",
      "block:cp0006",
    ]);
  });

  it("does not merge blocks of different chains", async () => {
    const out = await afterTheFirst(block(1), [block(2, 1), block(3, 1), block(7, 2), block(4, 1)]);

    expect(out.map((event) => `${event.chain.id}:${event.checkpoint}`)).toEqual([
      "1:cp0001",
      "1:cp0003",
      "2:cp0007",
      "1:cp0004",
    ]);
  });

  it("merges at most 50 blocks into one event", async () => {
    const waiting = Array.from({ length: MAX_MERGED_BLOCKS + 5 }, (_, index) => block(index + 2));
    const out = (await afterTheFirst(block(1), waiting)) as BlockEvent[];

    expect(out.map((event) => event.events.length)).toEqual([1, MAX_MERGED_BLOCKS, 5]);
    expect(out.flatMap((event) => event.events)).toEqual(
      Array.from({ length: MAX_MERGED_BLOCKS + 6 }, (_, index) => `event of block ${index + 1}`),
    );
  });
});
