import { describe, expect, it } from "vitest";
import type { Hex } from "viem";
import type { KeyRecord } from "../http/middleware/authenticate.js";
import { IndexKeyDirectory } from "./indexKeyDirectory.js";

const KEY = `0x${"ab".repeat(32)}` as Hex;
const WALLET = `0x${"12".repeat(20)}` as Hex;

/** The index as a sequence of answers: before and after it caught up with the chain. */
function directory(
  before: KeyRecord | null,
  after: KeyRecord | null,
  { indexCatchesUp = true, onChain = null }: { indexCatchesUp?: boolean; onChain?: KeyRecord | null } = {},
) {
  let caughtUp = false;
  const waits: number[] = [];
  const chainReads: Hex[] = [];
  const keys = new IndexKeyDirectory(
    { keyOf: () => Promise.resolve(caughtUp ? after : before) },
    {
      caughtUpSince: (since: number) => {
        waits.push(since);
        caughtUp = indexCatchesUp;
        return Promise.resolve(indexCatchesUp);
      },
    },
    {
      lookup: (keyHash: Hex) => {
        chainReads.push(keyHash);
        return Promise.resolve(onChain);
      },
    },
  );
  return { keys, waits, chainReads };
}

describe("IndexKeyDirectory", () => {
  it("answers an active key at once, without waiting for the index", async () => {
    const { keys, waits } = directory({ wallet: WALLET, status: "active" }, null);
    expect(await keys.lookup(KEY)).toEqual({ wallet: WALLET, status: "active" });
    expect(waits).toHaveLength(0);
  });

  it("waits for the index before calling a key unknown, so a key registered a moment ago is served", async () => {
    const { keys, waits } = directory(null, { wallet: WALLET, status: "active" });
    expect(await keys.lookup(KEY)).toEqual({ wallet: WALLET, status: "active" });
    expect(waits).toHaveLength(1);
  });

  it("waits for the index before refusing a suspended key, so a key reinstated a moment ago is served", async () => {
    const { keys, waits } = directory({ wallet: WALLET, status: "suspended" }, { wallet: WALLET, status: "active" });
    expect(await keys.lookup(KEY)).toEqual({ wallet: WALLET, status: "active" });
    expect(waits).toHaveLength(1);
  });

  it("refuses a revoked key once the index has caught up and still shows it revoked", async () => {
    const { keys } = directory({ wallet: WALLET, status: "revoked" }, { wallet: WALLET, status: "revoked" });
    expect(await keys.lookup(KEY)).toEqual({ wallet: WALLET, status: "revoked" });
  });

  it("asks the chain about a key the index does not know when the index is still behind at the bound", async () => {
    const { keys, chainReads } = directory(null, null, {
      indexCatchesUp: false,
      onChain: { wallet: WALLET, status: "active" },
    });
    expect(await keys.lookup(KEY)).toEqual({ wallet: WALLET, status: "active" });
    expect(chainReads).toEqual([KEY]);
  });

  it("refuses an unknown key from the index alone once the index has caught up: no chain read", async () => {
    const { keys, chainReads } = directory(null, null, { onChain: { wallet: WALLET, status: "active" } });
    expect(await keys.lookup(KEY)).toBeNull();
    expect(chainReads).toHaveLength(0);
  });

  it("never reads the chain for a key the index holds active", async () => {
    const { keys, chainReads } = directory({ wallet: WALLET, status: "active" }, null, { indexCatchesUp: false });
    expect(await keys.lookup(KEY)).toEqual({ wallet: WALLET, status: "active" });
    expect(chainReads).toHaveLength(0);
  });
});
