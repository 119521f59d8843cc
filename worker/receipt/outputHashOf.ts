import { createHash } from "node:crypto";
import type { Hex } from "viem";

/** sha256 of the UTF-8 output text as `bytes32` (the API spells it `sha256:<hex>`). */
export function outputHashOf(text: string): Hex {
  return `0x${createHash("sha256").update(text, "utf8").digest("hex")}`;
}
