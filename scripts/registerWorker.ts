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
import {
  type LocalChain,
  type Mint,
  localChainClients,
  mintAll,
  waitMined as waitLocalMined,
} from "./deploy/fundLocal.js";
import { creditEscrowAbi, modelKeyOf, stablecoinAbi, stakeTokenAbi, workerRegistryAbi } from "@credit-metered/client";
import { settleAll } from "./stack/settleAll.js";
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
  if (deployments.chainId === LOCAL_CHAIN_ID) {
    const [result] = await registerLocalWorkers({ ...params, workers: [params] });
    if (!result) throw new Error("registerLocalWorkers answered nothing");
    return result;
  }
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

  const bond = params.bond ?? 0n;
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

/** One worker of a batch: what `registerWorker` takes besides the chain. */
export type WorkerRegistration = Omit<RegisterWorkerParams, "rpcUrl" | "deploymentsFile">;

export type RegisterWorkersParams = Pick<RegisterWorkerParams, "rpcUrl" | "deploymentsFile"> & {
  workers: WorkerRegistration[];
};

/** Registers several workers, each as `registerWorker` would (results in the same order); idempotent. */
export async function registerWorkers(params: RegisterWorkersParams): Promise<RegisterWorkerResult[]> {
  if (loadDeployment(params.deploymentsFile).chainId === LOCAL_CHAIN_ID) return registerLocalWorkers(params);
  const results: RegisterWorkerResult[] = [];
  for (const worker of params.workers) results.push(await registerWorker({ ...params, ...worker }));
  return results;
}

/**
 * The local chain's registration, batched: the stake and bond for every worker are minted first by the one minter,
 * back to back (mintAll), while each worker approves its own; then every worker posts its bond; then the workers
 * register in the given order (so the chain lists them as it would one by one). Each worker sends from its own
 * account with its own nonces, so the workers' transactions need not wait for each other's receipts, only their
 * own dependencies (approve before postBond and register, mint before them too). Nothing else may send from the
 * minter or these workers meanwhile.
 */
async function registerLocalWorkers(params: RegisterWorkersParams): Promise<RegisterWorkerResult[]> {
  const deployment = loadDeployment(params.deploymentsFile);
  const { stakeToken, workerRegistry: registry, stablecoin, creditEscrow } = deployment.contracts;
  const chain: LocalChain = { rpcUrl: params.rpcUrl, deployment };
  const workers = params.workers.map((worker) => {
    const account = privateKeyToAccount(worker.workerPrivateKey);
    return { ...worker, account, clients: localChainClients(chain, account) };
  });
  const reader = workers[0]?.clients.publicClient;
  if (!reader) return [];

  const statuses = await Promise.all(
    workers.map(({ account }) =>
      reader.readContract({
        address: registry,
        abi: workerRegistryAbi,
        functionName: "getWorker",
        args: [account.address],
      }),
    ),
  );
  const pending = workers.filter((_, index) => statuses[index]?.status === WORKER_STATUS_NONE);
  const minStake = pending.some((worker) => worker.stake === undefined)
    ? await reader.readContract({ address: registry, abi: workerRegistryAbi, functionName: "minStake" })
    : 0n;
  const plans = await Promise.all(
    pending.map(async (worker) => ({
      ...worker,
      stake: worker.stake ?? minStake,
      bond: worker.bond ?? LOCAL_WORKER_BOND,
      nonce: await reader.getTransactionCount({ address: worker.account.address, blockTag: "pending" }),
    })),
  );

  // Approvals need no balance, so they go while the minter mints.
  await settleAll([
    mintAll(
      chain,
      plans.flatMap(({ account, stake, bond }): Mint[] => [
        { token: "stakeToken", to: account.address, amount: stake },
        ...(bond > 0n ? [{ token: "stablecoin" as const, to: account.address, amount: bond }] : []),
      ]),
    ),
    ...plans.map(async (plan) => {
      const { clients, stake, bond } = plan;
      const hashes = [
        await clients.walletClient.writeContract({
          address: stakeToken,
          abi: stakeTokenAbi,
          functionName: "approve",
          args: [registry, stake],
          nonce: plan.nonce++,
        }),
      ];
      if (bond > 0n) {
        hashes.push(
          await clients.walletClient.writeContract({
            address: stablecoin,
            abi: stablecoinAbi,
            functionName: "approve",
            args: [creditEscrow, bond],
            nonce: plan.nonce++,
          }),
        );
      }
      await Promise.all(hashes.map((hash) => waitLocalMined(clients, hash)));
    }),
  ]);

  await settleAll(
    plans.map(async (plan) => {
      if (plan.bond === 0n) return;
      const hash = await plan.clients.walletClient.writeContract({
        address: creditEscrow,
        abi: creditEscrowAbi,
        functionName: "postBond",
        args: [plan.account.address, plan.bond],
        nonce: plan.nonce++,
      });
      await waitLocalMined(plan.clients, hash);
    }),
  );

  const txHashes = new Map<Address, Hex>();
  for (const plan of plans) {
    txHashes.set(
      plan.account.address,
      await plan.clients.walletClient.writeContract({
        address: registry,
        abi: workerRegistryAbi,
        functionName: "register",
        args: [plan.endpoint, plan.models.map(modelKeyOf), plan.stake],
        nonce: plan.nonce++,
      }),
    );
  }
  await settleAll(plans.map((plan) => waitLocalMined(plan.clients, txHashes.get(plan.account.address) as Hex)));

  return workers.map(({ account }) => {
    const txHash = txHashes.get(account.address);
    return txHash
      ? { worker: account.address, txHash, alreadyRegistered: false }
      : { worker: account.address, alreadyRegistered: true };
  });
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
