// Decoding of the product contracts' logs: the verify scripts and the web app's explorer page read events with it.
import { decodeEventLog, getAddress, type Abi, type Address, type Hex, type Log } from "viem";
import {
  apiKeyRegistryAbi,
  creditEscrowAbi,
  disputeManagerAbi,
  modelCatalogAbi,
  stablecoinAbi,
  workerRegistryAbi,
} from "./abis.js";

export type ProductContracts = {
  stablecoin: Address;
  stakeToken: Address;
  apiKeyRegistry: Address;
  modelCatalog: Address;
  workerRegistry: Address;
  creditEscrow: Address;
  disputeManager: Address;
};
export type ContractName = keyof ProductContracts;

/** One decoded log of a product contract. `args` keeps viem's decoded values (bigint, hex, boolean, number). */
export interface ProductEvent {
  contract: ContractName;
  address: Address;
  eventName: string;
  args: Record<string, unknown>;
  logIndex: number;
  blockNumber: bigint;
  transactionHash: Hex;
}

/** The ABI of each product contract (for decoding its logs and its calls). */
export const PRODUCT_ABIS: Record<ContractName, Abi> = {
  stablecoin: stablecoinAbi,
  // The stake token is a plain ERC20: the stablecoin's ABI decodes its Transfer/Approval too.
  stakeToken: stablecoinAbi,
  apiKeyRegistry: apiKeyRegistryAbi,
  modelCatalog: modelCatalogAbi,
  workerRegistry: workerRegistryAbi,
  creditEscrow: creditEscrowAbi,
  disputeManager: disputeManagerAbi,
};

/** Names a product contract by address, or undefined for any other address. */
export function contractNameOf(contracts: ProductContracts, address: string): ContractName | undefined {
  const wanted = address.toLowerCase();
  return (Object.keys(contracts) as ContractName[]).find((name) => contracts[name].toLowerCase() === wanted);
}

/** Decodes the logs emitted by the product's contracts; logs of other contracts and unknown topics are skipped. */
export function decodeProductLogs(contracts: ProductContracts, logs: readonly Log[]): ProductEvent[] {
  const events: ProductEvent[] = [];
  for (const log of logs) {
    const contract = contractNameOf(contracts, log.address);
    if (!contract) continue;
    try {
      const decoded = decodeEventLog({ abi: PRODUCT_ABIS[contract], data: log.data, topics: log.topics, strict: true });
      events.push({
        contract,
        address: getAddress(log.address),
        eventName: decoded.eventName ?? "",
        args: (decoded.args ?? {}) as Record<string, unknown>,
        logIndex: log.logIndex ?? 0,
        blockNumber: log.blockNumber ?? 0n,
        transactionHash: log.transactionHash ?? "0x",
      });
    } catch {
      // An event this ABI does not know (e.g. OpenZeppelin internals): not a product fact.
    }
  }
  return events;
}

/** A bigint argument (throws naming the field when the log lacks it: a contract/ABI mismatch). */
export function bigArg(event: ProductEvent, name: string): bigint {
  const value = event.args[name];
  if (typeof value === "bigint") return value;
  if (typeof value === "number") return BigInt(value);
  throw new Error(`${event.eventName}.${name} missing`);
}

/** A hex/address argument. */
export function hexArg(event: ProductEvent, name: string): Hex {
  const value = event.args[name];
  if (typeof value === "string" && value.startsWith("0x")) return value as Hex;
  throw new Error(`${event.eventName}.${name} missing`);
}

export function numArg(event: ProductEvent, name: string): number {
  return Number(bigArg(event, name));
}

/** Stablecoin units (6 decimals) as a USDG string with up to 6 decimals. */
export function formatUsdg(units: bigint): string {
  const negative = units < 0n;
  const abs = negative ? -units : units;
  const whole = abs / 1_000_000n;
  const fraction = (abs % 1_000_000n).toString().padStart(6, "0").replace(/0+$/, "");
  const text = fraction.length === 0 ? `${whole}.00` : `${whole}.${fraction.padEnd(2, "0")}`;
  return `${negative ? "-" : ""}${text}`;
}
