import { describe, expect, it } from "vitest";
import { readIndexerEnv } from "../../indexer/config/readIndexerEnv.js";

// No stack: the indexer's environment is checked before Ponder indexes anything.
const REQUIRED = { DEPLOYMENTS_FILE: "deployments.json", PONDER_RPC_URL: "http://127.0.0.1:8545" };

describe("the indexer's environment", () => {
  it("leaves the schema lock's heartbeat to the patched Ponder's defaults when unset", () => {
    const env = readIndexerEnv(REQUIRED);
    expect(env.PONDER_DATABASE_HEARTBEAT_INTERVAL_MS).toBeUndefined();
    expect(env.PONDER_DATABASE_HEARTBEAT_TIMEOUT_MS).toBeUndefined();
  });

  it("accepts a heartbeat timeout of three intervals or more", () => {
    const env = readIndexerEnv({
      ...REQUIRED,
      PONDER_DATABASE_HEARTBEAT_INTERVAL_MS: "1000",
      PONDER_DATABASE_HEARTBEAT_TIMEOUT_MS: "3000",
    });
    expect(env.PONDER_DATABASE_HEARTBEAT_TIMEOUT_MS).toBe(3_000);
  });

  it("refuses a heartbeat timeout under three intervals, which could let a live indexer's schema be taken over", () => {
    expect(() => readIndexerEnv({ ...REQUIRED, PONDER_DATABASE_HEARTBEAT_TIMEOUT_MS: "5000" })).toThrow(
      /PONDER_DATABASE_HEARTBEAT_TIMEOUT_MS must be at least three heartbeat intervals/,
    );
  });
});
