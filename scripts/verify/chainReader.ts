import { createPublicClient, http, type Address, type PublicClient } from "viem";
import { parseDeployment, type Deployment } from "@credit-metered/client";
import { readFileSync } from "node:fs";

export interface ChainReader {
  client: PublicClient;
  deployment: Deployment;
}

/** A read-only view of the chain: an RPC URL and the deployments file. Nothing else is consulted. */
export function createChainReader(rpcUrl: string, deploymentsFile: string): ChainReader {
  const deployment = parseDeployment(JSON.parse(readFileSync(deploymentsFile, "utf8")));
  const chain = {
    id: deployment.chainId,
    name: `chain ${deployment.chainId}`,
    nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
    rpcUrls: { default: { http: [rpcUrl] } },
  } as const;
  const client = createPublicClient({ chain, transport: http(rpcUrl) }) as PublicClient;
  return { client, deployment };
}

/** The escrow's address, typed. */
export function escrowOf(reader: ChainReader): Address {
  return reader.deployment.contracts.creditEscrow;
}
