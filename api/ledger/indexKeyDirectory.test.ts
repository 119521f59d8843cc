import { describe, expect, it } from "vitest";
import type { Hex } from "viem";
import type { KeyRecord } from "../http/middleware/authenticate.js";
import { ActiveKeyCache } from "./activeKeyCache.js";
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

  describe("with a cache of active keys", () => {
    /** An index that holds KEY with `status`, counting its reads, behind a cache whose notifications flow. */
    function cached(status: KeyRecord["status"] = "active") {
      let record: KeyRecord = { wallet: WALLET, status };
      let reads = 0;
      const cache = new ActiveKeyCache({ table: "api_key", maxAgeMs: 10_000, maxEntries: 10 });
      cache.listening(true);
      const keys = new IndexKeyDirectory(
        {
          keyOf: () => {
            reads += 1;
            return Promise.resolve(record);
          },
        },
        { caughtUpSince: () => Promise.resolve(true) },
        { lookup: () => Promise.resolve(null) },
        cache,
      );
      return {
        keys,
        cache,
        reads: () => reads,
        set: (next: KeyRecord["status"]) => (record = { wallet: WALLET, status: next }),
      };
    }

    it("reads an active key from the index once, then answers from memory", async () => {
      const { keys, reads } = cached();
      expect(await keys.lookup(KEY)).toEqual({ wallet: WALLET, status: "active" });
      expect(await keys.lookup(KEY)).toEqual({ wallet: WALLET, status: "active" });
      expect(reads()).toBe(1);
    });

    it("refuses a key revoked in the index once the index announces a change to its key table", async () => {
      const { keys, cache, set } = cached();
      await keys.lookup(KEY);
      set("revoked");
      cache.changed(["api_key"]);
      expect(await keys.lookup(KEY)).toEqual({ wallet: WALLET, status: "revoked" });
    });

    it("reads a refused key from the index every time (a reinstatement is seen at once)", async () => {
      const { keys, reads, set } = cached("suspended");
      expect((await keys.lookup(KEY))?.status).toBe("suspended");
      set("active");
      expect((await keys.lookup(KEY))?.status).toBe("active");
      expect(reads()).toBe(3); // the refusal read twice (before and after the index caught up), then the active key
    });
  });
});
