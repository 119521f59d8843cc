import { describe, expect, it } from "vitest";
import type { Hex } from "viem";
import { ActiveKeyCache } from "./activeKeyCache.js";

const KEY = `0x${"AB".repeat(32)}` as Hex;
const OTHER = `0x${"cd".repeat(32)}` as Hex;
const WALLET = `0x${"12".repeat(20)}` as Hex;
const ACTIVE = { wallet: WALLET, status: "active" } as const;

function cache(options: { maxAgeMs?: number; maxEntries?: number } = {}) {
  let now = 1_000;
  const keys = new ActiveKeyCache({
    table: "api_key",
    maxAgeMs: options.maxAgeMs ?? 10_000,
    maxEntries: options.maxEntries ?? 100,
    now: () => now,
  });
  return { keys, advance: (ms: number) => (now += ms) };
}

/** A cache whose notifications are flowing, holding KEY as active. */
function holding(options: { maxAgeMs?: number; maxEntries?: number } = {}) {
  const made = cache(options);
  made.keys.listening(true);
  made.keys.keep(KEY, ACTIVE, made.keys.begin());
  return made;
}

describe("ActiveKeyCache", () => {
  it("answers a kept active key, whatever the case of its hash", () => {
    const { keys } = holding();
    expect(keys.get(KEY)).toEqual(ACTIVE);
    expect(keys.get(KEY.toLowerCase() as Hex)).toEqual(ACTIVE);
  });

  it("keeps nothing while the index's notifications do not reach it", () => {
    const { keys } = cache();
    keys.keep(KEY, ACTIVE, keys.begin());
    expect(keys.get(KEY)).toBeUndefined();
  });

  it("forgets every key when the notifications stop, and keeps none until they flow again", () => {
    const { keys } = holding();
    keys.listening(false);
    expect(keys.get(KEY)).toBeUndefined();
    keys.keep(KEY, ACTIVE, keys.begin());
    expect(keys.get(KEY)).toBeUndefined();
  });

  it("forgets every key when a block writes the key table", () => {
    const { keys } = holding();
    keys.changed(["account", "api_key", "job"]);
    expect(keys.get(KEY)).toBeUndefined();
  });

  it("keeps its keys through blocks that write other tables", () => {
    const { keys } = holding();
    keys.changed(["account", "chain_event", "job"]);
    keys.changed([]);
    expect(keys.get(KEY)).toEqual(ACTIVE);
  });

  it("forgets every key on a notification that does not say which tables changed", () => {
    const { keys } = holding();
    keys.changed(undefined);
    expect(keys.get(KEY)).toBeUndefined();
  });

  it("does not keep a read that began before the key table changed (it may predate a revocation)", () => {
    const { keys } = cache();
    keys.listening(true);
    const began = keys.begin();
    keys.changed(["api_key"]);
    keys.keep(KEY, ACTIVE, began);
    expect(keys.get(KEY)).toBeUndefined();
  });

  it("never keeps a key that is not active", () => {
    const { keys } = cache();
    keys.listening(true);
    keys.keep(KEY, { wallet: WALLET, status: "revoked" }, keys.begin());
    keys.keep(OTHER, { wallet: WALLET, status: "suspended" }, keys.begin());
    expect(keys.get(KEY)).toBeUndefined();
    expect(keys.get(OTHER)).toBeUndefined();
  });

  it("reads a key again once its entry is older than the bound, notification or not", () => {
    const { keys, advance } = holding({ maxAgeMs: 5_000 });
    advance(4_999);
    expect(keys.get(KEY)).toEqual(ACTIVE);
    advance(1);
    expect(keys.get(KEY)).toBeUndefined();
  });

  it("keeps nothing with a bound of 0", () => {
    const { keys } = holding({ maxAgeMs: 0 });
    expect(keys.get(KEY)).toBeUndefined();
  });

  it("lets the oldest key go when full", () => {
    const { keys } = holding({ maxEntries: 1 });
    keys.keep(OTHER, ACTIVE, keys.begin());
    expect(keys.get(KEY)).toBeUndefined();
    expect(keys.get(OTHER)).toEqual(ACTIVE);
  });
});
