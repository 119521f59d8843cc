// Operator command: stake and register a worker on chain (`npm run worker:register`).
//
//   RPC_URL=… DEPLOYMENTS_FILE=… WORKER_PRIVATE_KEY=0x… WORKER_ENDPOINT=http://host:port \
//   WORKER_MODELS=llama-3.1-8b-instruct,qwen3-1.7b [WORKER_STAKE_SVC=1000] npm run worker:register
//
// On a local chain (31337) the stake is minted first by the stake token's owner (local account 0), so a worker
// needs nothing but a key; on any other chain the worker must hold the stake token already.
import path from "node:path";
import { pathToFileURL } from "node:url";
import {
  createPublicClient,
  createWalletClient,
  http,
  parseUnits,
  type Address,
  type Hex,
  type PublicClient,
} from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { hardhat } from "viem/chains";
import { z } from "zod";
import { mintStablecoin, mintStake } from "./deploy/fundLocal.js";
import { creditEscrowAbi, modelKeyOf, stablecoinAbi, stakeTokenAbi, workerRegistryAbi } from "@credit-metered/client";
import { loadDeployment } from "@credit-metered/client/node";

const LOCAL_CHAIN_ID = 31337;

export type RegisterWorkerParams = {
  rpcUrl: string;
  /** The deployments JSON written by `deployContracts`. */
  deploymentsFile: string;
  workerPrivateKey: Hex;
  /** URL the gateway reaches the worker at (announced on chain). */
  endpoint: string;
  models: string[];
  /** Stake in stake-token units; default the registry's minimum. */
  stake?: bigint;
  /**
   * Stablecoin bond to post in the escrow, units (docs/DESIGN.md, "Fraud never pays": a worker is paid only while
   * the charges of its still-disputable jobs stay within its bond). Default: `LOCAL_WORKER_BOND` on local chains
   * (minted first), none elsewhere.
   */
  bond?: bigint;
};

/** The bond a local worker posts by default: 100,000 stablecoin, far above a test stack's day of charges. */
export const LOCAL_WORKER_BOND = 100_000n * 10n ** 6n;

export type RegisterWorkerResult = {
  worker: Address;
  /** Hash of the `register` transaction; absent when the worker was registered already. */
  txHash?: Hex;
  alreadyRegistered: boolean;
};

const WORKER_STATUS_NONE = 0;

/** Mints (local chains), approves and registers a worker with its endpoint, models and stake; idempotent. */
export async function registerWorker(params: RegisterWorkerParams): Promise<RegisterWorkerResult> {
  const deployments = loadDeployment(params.deploymentsFile);
  const { stakeToken, workerRegistry: registry, stablecoin, creditEscrow } = deployments.contracts;
  const account = privateKeyToAccount(params.workerPrivateKey);
  const chain = { ...hardhat, id: deployments.chainId };
  const transport = http(params.rpcUrl);
  const publicClient = createPublicClient({ chain, transport });
  const wallet = createWalletClient({ account, chain, transport });

  const existing = await publicClient.readContract({
    address: registry,
    abi: workerRegistryAbi,
    functionName: "getWorker",
    args: [account.address],
  });
  if (existing.status !== WORKER_STATUS_NONE) return { worker: account.address, alreadyRegistered: true };

  const stake =
    params.stake ??
    (await publicClient.readContract({ address: registry, abi: workerRegistryAbi, functionName: "minStake" }));

  const local = deployments.chainId === LOCAL_CHAIN_ID;
  const bond = params.bond ?? (local ? LOCAL_WORKER_BOND : 0n);
  if (local) {
    await mintStake({ rpcUrl: params.rpcUrl, deployment: deployments }, account.address, stake);
    if (bond > 0n) await mintStablecoin({ rpcUrl: params.rpcUrl, deployment: deployments }, account.address, bond);
  }
  if (bond > 0n) {
    await waitMined(
      publicClient,
      await wallet.writeContract({
        address: stablecoin,
        abi: stablecoinAbi,
        functionName: "approve",
        args: [creditEscrow, bond],
      }),
    );
    await waitMined(
      publicClient,
      await wallet.writeContract({
        address: creditEscrow,
        abi: creditEscrowAbi,
        functionName: "postBond",
        args: [account.address, bond],
      }),
    );
  }
  await waitMined(
    publicClient,
    await wallet.writeContract({
      address: stakeToken,
      abi: stakeTokenAbi,
      functionName: "approve",
      args: [registry, stake],
    }),
  );
  const modelKeys = params.models.map(modelKeyOf);
  const txHash = await wallet.writeContract({
    address: registry,
    abi: workerRegistryAbi,
    functionName: "register",
    args: [params.endpoint, modelKeys, stake],
  });
  await waitMined(publicClient, txHash);
  return { worker: account.address, txHash, alreadyRegistered: false };
}

async function waitMined(client: PublicClient, hash: Hex): Promise<void> {
  const receipt = await client.waitForTransactionReceipt({ hash, pollingInterval: 50 });
  if (receipt.status !== "success") throw new Error(`transaction ${hash} reverted`);
}

const cliEnvSchema = z.object({
  RPC_URL: z.url(),
  DEPLOYMENTS_FILE: z.string().min(1),
  WORKER_PRIVATE_KEY: z.string().regex(/^0x[0-9a-fA-F]{64}$/, "0x followed by 64 hex digits"),
  WORKER_ENDPOINT: z.url(),
  WORKER_MODELS: z
    .string()
    .transform((value) =>
      value
        .split(",")
        .map((id) => id.trim())
        .filter((id) => id.length > 0),
    )
    .pipe(z.array(z.string()).min(1, "at least one model id")),
  /** Whole stake tokens (SVC, 18 decimals); default the registry's minimum. */
  WORKER_STAKE_SVC: z
    .string()
    .regex(/^\d+(\.\d+)?$/)
    .optional(),
});

async function main(): Promise<void> {
  const parsed = cliEnvSchema.safeParse(process.env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((issue) => `  ${issue.path.join(".")}: ${issue.message}`);
    console.error(`worker:register: invalid environment\n${lines.join("\n")}`);
    process.exit(2);
  }
  const env = parsed.data;
  const result = await registerWorker({
    rpcUrl: env.RPC_URL,
    deploymentsFile: path.resolve(env.DEPLOYMENTS_FILE),
    workerPrivateKey: env.WORKER_PRIVATE_KEY as Hex,
    endpoint: env.WORKER_ENDPOINT,
    models: env.WORKER_MODELS,
    ...(env.WORKER_STAKE_SVC ? { stake: parseUnits(env.WORKER_STAKE_SVC, 18) } : {}),
  });
  if (result.alreadyRegistered) console.log(`worker ${result.worker} is registered already`);
  else console.log(`worker ${result.worker} registered (tx ${result.txHash})`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  main().catch((error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  });
}
