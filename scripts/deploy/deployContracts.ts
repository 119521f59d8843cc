// Deploys the seven contracts with viem and writes the deployments file (docs/DESIGN.md). Every role and the launch
// catalog are constructor arguments: they are the only grants and listings that apply without the 2-day delay
// (DelayedAccessControl, ModelCatalog), so the deployment needs no transaction after the contracts exist, except
// ETH for extra local gateway signers. Mints nothing: funding is `fundLocal.ts`'s job.
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import {
  type Account,
  type Address,
  type Hash,
  type Hex,
  encodeDeployData,
  getContractAddress,
  keccak256,
  toBytes,
  zeroHash,
} from "viem";
import {
  modelCatalogAbi,
  type Deployment,
  type DeploymentJson,
  parseDeployment,
  LAUNCH_CATALOG,
  type CatalogModel,
  modelKeyOf,
  tierIndex,
} from "@credit-metered/client";
import { LOCAL_ACCOUNT_INDEX, localAccount } from "@credit-metered/client/local";
import { type ChainClients, createChainClients } from "./chainClients.js";
import type { DeployableName } from "./deployables.js";
import { readArtifact } from "./readArtifact.js";

/** Constructor parameters (docs/DESIGN.md, "Deployment parameters"). */
export interface DeployParams {
  jobTimeout: number;
  disputeWindow: number;
  arbitrationWindow: number;
  unbondingDelay: number;
  minStake: bigint;
  feeBps: number;
}

/** An upheld dispute takes the whole stake (WorkerRegistry.slash); recorded in the deployments file. */
const SLASH_BPS_WHOLE_STAKE = 10_000;

const STAKE_TOKEN_UNIT = 10n ** 18n;

export const DEFAULT_DEPLOY_PARAMS: DeployParams = {
  jobTimeout: 120,
  disputeWindow: 60,
  arbitrationWindow: 24 * 60 * 60,
  unbondingDelay: 3 * 24 * 60 * 60,
  minStake: 1_000n * STAKE_TOKEN_UNIT,
  feeBps: 1_000,
};

/** Who deploys (and so administers and governs) and who holds each role. */
export interface DeployAccounts {
  /** Signs every deployment transaction; becomes admin, catalog governance, pauser and token owner. */
  deployer: Account;
  gateway: Address;
  /** Further gateway signers (several gateway processes, each with its own key): the same roles as `gateway`,
   *  and ETH for gas when `fundExtraGatewaysWei` is set. */
  extraGateways?: Address[];
  arbiter: Address;
  operator: Address;
  treasury: Address;
}

export interface DeployContractsOptions {
  rpcUrl: string;
  /** Where to write the deployments JSON; nothing is written without it. */
  outFile?: string;
  params?: Partial<DeployParams>;
  /** Defaults to the local accounts of Hardhat's mnemonic (docs/DESIGN.md, "Local accounts"). */
  accounts?: DeployAccounts;
  /** Models to list; defaults to the launch catalog. */
  models?: readonly CatalogModel[];
  /** ETH (wei) the deployer sends each extra gateway signer that holds less (local chains). */
  fundExtraGatewaysWei?: bigint;
  /** Refuse to deploy unless the node reports this chain id (public chains: a wrong RPC URL must not deploy). */
  expectedChainId?: number;
  /** Told each contract's ABI-encoded constructor arguments (hex, no 0x), for source verification. */
  onConstructorArguments?: (name: DeployableName, encoded: string) => void;
}

/** The local stack's role holders. */
export function localDeployAccounts(): DeployAccounts {
  // One account at a time: deriving from the mnemonic costs tens of ms each, and localAccounts() derives all 14.
  const address = (index: number) => localAccount(index).address;
  return {
    deployer: localAccount(LOCAL_ACCOUNT_INDEX.admin),
    gateway: address(LOCAL_ACCOUNT_INDEX.gateway),
    arbiter: address(LOCAL_ACCOUNT_INDEX.arbiter),
    operator: address(LOCAL_ACCOUNT_INDEX.operator),
    treasury: address(LOCAL_ACCOUNT_INDEX.treasury),
  };
}

const roleId = (name: string): Hex => keccak256(toBytes(name));

/** One constructor role grant (contracts/access/DelayedAccessControl.sol `RoleGrant`). */
interface RoleGrant {
  role: Hex;
  account: Address;
}
const grant = (name: string, account: Address): RoleGrant => ({ role: roleId(name), account });

/** Deploys, wires and seeds everything; returns (and optionally writes) the deployments record. */
export async function deployContracts(options: DeployContractsOptions): Promise<Deployment> {
  const params: DeployParams = { ...DEFAULT_DEPLOY_PARAMS, ...options.params };
  const accounts = options.accounts ?? localDeployAccounts();
  const admin = accounts.deployer.address;
  const clients = await createChainClients(options.rpcUrl, accounts.deployer);
  const deploy = (name: DeployableName, args: readonly unknown[]) =>
    deployOne(clients, name, args, options.onConstructorArguments);
  if (options.expectedChainId !== undefined && clients.chain.id !== options.expectedChainId) {
    throw new Error(`the node at ${options.rpcUrl} is chain ${clients.chain.id}, not ${options.expectedChainId}`);
  }
  const startBlock = await clients.publicClient.getBlockNumber();
  const catalogModels = options.models ?? LAUNCH_CATALOG;
  const gateways = [accounts.gateway, ...(accounts.extraGateways ?? [])];
  // The default admin is every contract's first constructor role (DelayedAccessControl).
  const adminGrant: RoleGrant = { role: zeroHash, account: admin };

  const stablecoin = await deploy("Stablecoin", [admin]);
  const stakeToken = await deploy("StakeToken", [admin]);
  const apiKeyRegistry = await deploy("ApiKeyRegistry", [admin, accounts.operator]);
  const modelCatalog = await deploy("ModelCatalog", [
    admin,
    admin,
    catalogModels.map((model) => ({
      modelId: model.id,
      params: {
        tier: tierIndex(model.tier),
        creditsPerRequest: model.creditsPerRequest,
        creditsPer1kTokens: model.creditsPer1kTokens,
        contextWindow: model.contextWindow,
        parameters: model.parameters,
        ownedBy: model.ownedBy,
      },
    })),
  ]);
  // The registry and the escrow name the dispute manager in their constructors; it is the deployer's third
  // creation from here (registry, escrow, dispute manager), so its address is known in advance.
  const nonce = await clients.publicClient.getTransactionCount({ address: admin, blockTag: "pending" });
  const predictedDisputeManager = getContractAddress({ from: admin, nonce: BigInt(nonce + 2) });
  const workerRegistry = await deploy("WorkerRegistry", [
    [adminGrant, grant("SLASHER_ROLE", predictedDisputeManager)],
    stakeToken,
    modelCatalog,
    accounts.treasury,
    params.minStake,
    BigInt(params.unbondingDelay),
    BigInt(params.disputeWindow),
    BigInt(params.arbitrationWindow),
  ]);
  const creditEscrow = await deploy("CreditEscrow", [
    [
      adminGrant,
      grant("PAUSER_ROLE", admin),
      grant("DISPUTE_ROLE", predictedDisputeManager),
      ...gateways.map((gateway) => grant("GATEWAY_ROLE", gateway)),
    ],
    stablecoin,
    apiKeyRegistry,
    modelCatalog,
    workerRegistry,
    accounts.treasury,
    params.feeBps,
    BigInt(params.jobTimeout),
  ]);
  // The escrow reads the dispute window and the dispute manager the arbitration window from the registry.
  const disputeManager = await deploy("DisputeManager", [
    [adminGrant, grant("ARBITER_ROLE", accounts.arbiter), ...gateways.map((gateway) => grant("GATEWAY_ROLE", gateway))],
    creditEscrow,
    workerRegistry,
  ]);
  if (disputeManager.toLowerCase() !== predictedDisputeManager.toLowerCase()) {
    // Another transaction from the deployer key landed in between: the roles name the wrong contract.
    throw new Error(`dispute manager at ${disputeManager}, roles granted to ${predictedDisputeManager}`);
  }

  const fund = options.fundExtraGatewaysWei;
  for (const gateway of fund ? (accounts.extraGateways ?? []) : []) {
    if ((await clients.publicClient.getBalance({ address: gateway })) >= (fund ?? 0n)) continue;
    await send(clients, () => clients.walletClient.sendTransaction({ to: gateway, value: fund }));
  }

  // Independent reads (a test stack lists dozens of models): in parallel rather than one round trip each.
  const models: Deployment["models"] = await Promise.all(
    catalogModels.map(async (model) => {
      const key = modelKeyOf(model.id);
      const stored = await clients.publicClient.readContract({
        address: modelCatalog,
        abi: modelCatalogAbi,
        functionName: "getModel",
        args: [key],
      });
      return { id: model.id, key, index: stored.index };
    }),
  );

  const record: DeploymentJson = {
    chainId: clients.chain.id,
    // The block after the last one before deployment: the indexer starts there.
    startBlock: Number(startBlock) + 1,
    contracts: {
      stablecoin,
      stakeToken,
      apiKeyRegistry,
      modelCatalog,
      workerRegistry,
      creditEscrow,
      disputeManager,
    },
    roles: {
      admin,
      gateway: accounts.gateway,
      arbiter: accounts.arbiter,
      operator: accounts.operator,
      treasury: accounts.treasury,
    },
    params: {
      jobTimeout: params.jobTimeout,
      disputeWindow: params.disputeWindow,
      arbitrationWindow: params.arbitrationWindow,
      unbondingDelay: params.unbondingDelay,
      minStake: params.minStake.toString(),
      slashBps: SLASH_BPS_WHOLE_STAKE,
      feeBps: params.feeBps,
    },
    models,
  };
  const deployment = parseDeployment(record);
  if (options.outFile) {
    mkdirSync(path.dirname(path.resolve(options.outFile)), { recursive: true });
    writeFileSync(options.outFile, `${JSON.stringify(deployment, null, 2)}\n`);
  }
  return deployment;
}

async function deployOne(
  clients: ChainClients,
  name: DeployableName,
  args: readonly unknown[],
  onConstructorArguments?: (name: DeployableName, encoded: string) => void,
): Promise<Address> {
  const { abi, bytecode } = readArtifact(name);
  const data = encodeDeployData({ abi, bytecode, args });
  onConstructorArguments?.(name, data.slice(bytecode.length));
  const receipt = await send(clients, () => clients.walletClient.sendTransaction({ data }));
  if (!receipt.contractAddress) throw new Error(`${name}: deployment created no contract`);
  return receipt.contractAddress;
}

/** Sends one transaction and waits for it; a revert is an error (deployments are all or nothing). */
async function send(clients: ChainClients, submit: () => Promise<Hash>) {
  const hash = await submit();
  const receipt = await clients.publicClient.waitForTransactionReceipt({ hash });
  if (receipt.status !== "success") throw new Error(`transaction ${hash} reverted`);
  return receipt;
}
