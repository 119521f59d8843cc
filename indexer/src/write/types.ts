import type { Context } from "ponder:registry";
import type { Hex } from "viem";

/** The store handlers write through. */
export type Db = Context["db"];

/** What the write helpers need to know about the log being projected. */
export type LogPosition = {
  block: { number: bigint; timestamp: bigint };
  log: { logIndex: number };
  transaction: { hash: Hex };
};
