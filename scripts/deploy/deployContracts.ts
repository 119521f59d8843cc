// Deploys the seven contracts with viem, wires their roles, lists the launch catalog and writes the
// deployments file (docs/DESIGN.md). Mints nothing: funding is `fundLocal.ts`'s job.
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { type Abi, type Account, type Address, type Hash, type Hex, encodeDeployData, keccak256, toBytes } from "viem";
import {
  creditEscrowAbi,
  disputeManagerAbi,
  modelCatalogAbi,
  workerRegistryAbi,
  type Deployment,
  type DeploymentJson,
  parseDeployment,
  LAUNCH_CATALOG,
  type CatalogModel,
  modelKeyOf,
  tierIndex,
} from "@credit-metered/client";
import { localAccounts } from "@credit-metered/client/local";
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
}

/** The local stack's role holders. */
export function localDeployAccounts(): DeployAccounts {
  const local = localAccounts();
  return {
    deployer: local.admin,
    gateway: local.gateway.address,
    arbiter: local.arbiter.address,
    operator: local.operator.address,
    treasury: local.treasury.address,
  };
}

const roleId = (name: string): Hex => keccak256(toBytes(name));

/** Deploys, wires and seeds everything; returns (and optionally writes) the deployments record. */
export async function deployContracts(options: DeployContractsOptions): Promise<Deployment> {
  const params: DeployParams = { ...DEFAULT_DEPLOY_PARAMS, ...options.params };
  const accounts = options.accounts ?? localDeployAccounts();
  const admin = accounts.deployer.address;
  const clients = await createChainClients(options.rpcUrl, accounts.deployer);
  const startBlock = await clients.publicClient.getBlockNumber();

  const stablecoin = await deploy(clients, "Stablecoin", [admin]);
  const stakeToken = await deploy(clients, "StakeToken", [admin]);
  const apiKeyRegistry = await deploy(clients, "ApiKeyRegistry", [admin, accounts.operator]);
  const modelCatalog = await deploy(clients, "ModelCatalog", [admin, admin]);
  const workerRegistry = await deploy(clients, "WorkerRegistry", [
    admin,
    stakeToken,
    modelCatalog,
    accounts.treasury,
    params.minStake,
    BigInt(params.unbondingDelay),
    BigInt(params.disputeWindow),
    BigInt(params.arbitrationWindow),
  ]);
  const creditEscrow = await deploy(clients, "CreditEscrow", [
    admin,
    stablecoin,
    apiKeyRegistry,
    modelCatalog,
    workerRegistry,
    accounts.treasury,
    params.feeBps,
    BigInt(params.jobTimeout),
  ]);
  // The escrow reads the dispute window and the dispute manager the arbitration window from the registry.
  const disputeManager = await deploy(clients, "DisputeManager", [admin, creditEscrow, workerRegistry]);

  const grants: [Address, Abi, string, Address][] = [
    [creditEscrow, creditEscrowAbi, "GATEWAY_ROLE", accounts.gateway],
    [creditEscrow, creditEscrowAbi, "PAUSER_ROLE", admin],
    [creditEscrow, creditEscrowAbi, "DISPUTE_ROLE", disputeManager],
    [workerRegistry, workerRegistryAbi, "SLASHER_ROLE", disputeManager],
    [disputeManager, disputeManagerAbi, "GATEWAY_ROLE", accounts.gateway],
    [disputeManager, disputeManagerAbi, "ARBITER_ROLE", accounts.arbiter],
    ...(accounts.extraGateways ?? []).flatMap((gateway): [Address, Abi, string, Address][] => [
      [creditEscrow, creditEscrowAbi, "GATEWAY_ROLE", gateway],
      [disputeManager, disputeManagerAbi, "GATEWAY_ROLE", gateway],
    ]),
  ];
  for (const [contract, abi, role, holder] of grants) {
    await send(clients, () =>
      clients.walletClient.writeContract({
        address: contract,
        abi,
        functionName: "grantRole",
        args: [roleId(role), holder],
      }),
    );
  }

  const fund = options.fundExtraGatewaysWei;
  for (const gateway of fund ? (accounts.extraGateways ?? []) : []) {
    if ((await clients.publicClient.getBalance({ address: gateway })) >= (fund ?? 0n)) continue;
    await send(clients, () => clients.walletClient.sendTransaction({ to: gateway, value: fund }));
  }

  const models: Deployment["models"] = [];
  for (const model of options.models ?? LAUNCH_CATALOG) {
    await send(clients, () =>
      clients.walletClient.writeContract({
        address: modelCatalog,
        abi: modelCatalogAbi,
        functionName: "addModel",
        args: [
          model.id,
          {
            tier: tierIndex(model.tier),
            creditsPerRequest: model.creditsPerRequest,
            creditsPer1kTokens: model.creditsPer1kTokens,
            contextWindow: model.contextWindow,
            parameters: model.parameters,
            ownedBy: model.ownedBy,
          },
        ],
      }),
    );
    const key = modelKeyOf(model.id);
    const stored = await clients.publicClient.readContract({
      address: modelCatalog,
      abi: modelCatalogAbi,
      functionName: "getModel",
      args: [key],
    });
    models.push({ id: model.id, key, index: stored.index });
  }

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

async function deploy(clients: ChainClients, name: DeployableName, args: readonly unknown[]): Promise<Address> {
  const { abi, bytecode } = readArtifact(name);
  const receipt = await send(clients, () =>
    clients.walletClient.sendTransaction({ data: encodeDeployData({ abi, bytecode, args }) }),
  );
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
