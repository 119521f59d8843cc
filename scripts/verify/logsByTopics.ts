import { formatLog, numberToHex, type Address, type Hex, type Log, type RpcLog } from "viem";
import type { ChainReader } from "./chainReader.js";

/**
 * `eth_getLogs` of one contract by topic position, from the deployment's start block: viem's typed `getLogs`
 * filters indexed arguments of one event only, and a job id (or wallet) sits in the same topic across several.
 */
export async function logsByTopics(reader: ChainReader, address: Address, topics: (Hex | null)[]): Promise<Log[]> {
  const raw = (await reader.client.request({
    method: "eth_getLogs",
    params: [{ address, fromBlock: numberToHex(reader.deployment.startBlock), toBlock: "latest", topics }],
  })) as RpcLog[];
  return raw.map((log) => formatLog(log));
}

/** An address as a 32-byte topic. */
export function addressTopic(address: Address): Hex {
  return `0x${address.slice(2).toLowerCase().padStart(64, "0")}`;
}
