// Shared deployment and helpers for the contract tests. Every fixture is a named function so that
// `networkHelpers.loadFixture` can snapshot it once per connection and revert to it for each test.
import type { NetworkConnection } from "hardhat/types/network";
import type { HardhatEthersSigner } from "@nomicfoundation/hardhat-ethers/types";
import type { ContractTransactionResponse, TypedDataDomain } from "ethers";
import type { ApiKeyRegistry, ModelCatalog } from "../../types/ethers-contracts/index.js";
import {
  CHAIN_JOB_STATUSES,
  KEY_STATUSES,
  RECEIPT_DOMAIN_NAME,
  RECEIPT_DOMAIN_VERSION,
  receiptTypes,
  tierIndex,
} from "@credit-metered/client";
import {
  AbiCoder,
  id,
  keccak256,
  sha256,
  toUtf8Bytes,
  zeroPadValue,
  toBeHex,
  encodeBytes32String,
  getCreateAddress,
} from "ethers";

/** Deployment parameters from docs/DESIGN.md. */
export const PARAMS = {
  jobTimeout: 120n,
  disputeWindow: 60n,
  arbitrationWindow: 86_400n,
  unbondingDelay: 3n * 86_400n,
  minStake: 1_000n * 10n ** 18n,
  feeBps: 1_000n,
  maxFeeBps: 2_000n,
  maxClockSkew: 30n,
  settleGrace: 300n,
  configChangeDelay: 2n * 86_400n,
  adminTransferDelay: 2n * 86_400n,
  /** ProtocolTime.ADMIN_TRANSFER_EXPIRY: a pending admin transfer may be accepted this long after it matured. */
  adminTransferExpiry: 7n * 86_400n,
} as const;

/** 1 credit = 10,000 stablecoin units (6 decimals, 1 stablecoin = 100 credits). */
export const UNIT_PER_CREDIT = 10_000n;
export const ONE_STABLECOIN = 1_000_000n;
export const SVC = 10n ** 18n;

/** Tier enum values (contracts/types/Tier.sol; the order is the client's `TIERS`). */
export const Tier = {
  Lite: tierIndex("lite"),
  Standard: tierIndex("standard"),
  Pro: tierIndex("pro"),
  Max: tierIndex("max"),
} as const;
/** JobStatus enum values (contracts/types/JobStatus.sol; the order is the client's `CHAIN_JOB_STATUSES`). */
export const JobStatus = {
  None: CHAIN_JOB_STATUSES.indexOf("none"),
  Open: CHAIN_JOB_STATUSES.indexOf("open"),
  Settled: CHAIN_JOB_STATUSES.indexOf("settled"),
  Failed: CHAIN_JOB_STATUSES.indexOf("failed"),
  Refunded: CHAIN_JOB_STATUSES.indexOf("refunded"),
  Disputed: CHAIN_JOB_STATUSES.indexOf("disputed"),
  DisputeUpheld: CHAIN_JOB_STATUSES.indexOf("dispute_upheld"),
} as const;
/** ICreditEscrow.SettleSkipReason. */
export const SettleSkipReason = {
  None: 0,
  JobNotOpen: 1,
  SignatureInvalid: 2,
  WorkerNotEligible: 3,
  ReceiptTimeInvalid: 4,
  SettlementWindowClosed: 5,
} as const;
/** ICreditEscrow.OpenSkipReason. */
export const OpenSkipReason = {
  None: 0,
  JobExists: 1,
  KeyNotActive: 2,
  ModelNotListed: 3,
  MaxTokensInvalid: 4,
  InsufficientCredits: 5,
  SpendingCapExceeded: 6,
} as const;
/** IApiKeyRegistry.KeyStatus values (the order is the client's `KEY_STATUSES`). */
export const KeyStatus = {
  None: KEY_STATUSES.indexOf("none"),
  Active: KEY_STATUSES.indexOf("active"),
  Revoked: KEY_STATUSES.indexOf("revoked"),
  Suspended: KEY_STATUSES.indexOf("suspended"),
} as const;
/** IWorkerRegistry.WorkerStatus. */
export const WorkerStatus = { None: 0, Active: 1, Unbonding: 2, Exited: 3, Slashed: 4 } as const;
/** IDisputeManager.Outcome. */
export const Outcome = { None: 0, Pending: 1, Upheld: 2, Rejected: 3, Expired: 4 } as const;

export const FRAUD_REASON = encodeBytes32String("fraudulent_proof");

export const GATEWAY_ROLE = id("GATEWAY_ROLE");
export const DISPUTE_ROLE = id("DISPUTE_ROLE");
export const PAUSER_ROLE = id("PAUSER_ROLE");
export const OPERATOR_ROLE = id("OPERATOR_ROLE");
export const GOVERNANCE_ROLE = id("GOVERNANCE_ROLE");
export const SLASHER_ROLE = id("SLASHER_ROLE");
export const ARBITER_ROLE = id("ARBITER_ROLE");
export const DEFAULT_ADMIN_ROLE = zeroPadValue("0x00", 32);

export interface ModelSpec {
  id: string;
  tier: number;
  creditsPerRequest: number;
  creditsPer1kTokens: number;
  contextWindow: number;
  parameters: string;
  ownedBy: string;
}

export const MODEL_MAX: ModelSpec = {
  id: "llama-3.3-70b-instruct",
  tier: Tier.Max,
  creditsPerRequest: 40,
  creditsPer1kTokens: 20,
  contextWindow: 128_000,
  parameters: "70B",
  ownedBy: "meta",
};
export const MODEL_LITE: ModelSpec = {
  id: "llama-3.2-3b-instruct",
  tier: Tier.Lite,
  creditsPerRequest: 2,
  creditsPer1kTokens: 1,
  contextWindow: 128_000,
  parameters: "3B",
  ownedBy: "meta",
};
export const MODEL_PRO: ModelSpec = {
  id: "gemma-3-27b-it",
  tier: Tier.Pro,
  creditsPerRequest: 18,
  creditsPer1kTokens: 9,
  contextWindow: 128_000,
  parameters: "27B",
  ownedBy: "google",
};

export function modelKey(modelId: string): string {
  return keccak256(toUtf8Bytes(modelId));
}

export function keyHash(apiKey: string): string {
  return keccak256(toUtf8Bytes(apiKey));
}

export function outputHash(text: string): string {
  return sha256(toUtf8Bytes(text));
}

/** A job id as the escrow stores it: a 128-bit value right-aligned in bytes32. */
export function jobId(n: number | bigint): string {
  return zeroPadValue(toBeHex(n), 32);
}

export function modelParams(spec: ModelSpec) {
  return {
    tier: spec.tier,
    creditsPerRequest: spec.creditsPerRequest,
    creditsPer1kTokens: spec.creditsPer1kTokens,
    contextWindow: spec.contextWindow,
    parameters: spec.parameters,
    ownedBy: spec.ownedBy,
  };
}

/** Reference pricing rule from docs/DESIGN.md, written independently of the contract and the client. */
export function expectedPrice(cpr: number, cp1k: number, completionTokens: number): bigint {
  if (completionTokens === 0) return 0n;
  if (completionTokens <= 500) return BigInt(cpr);
  const extra = BigInt(completionTokens - 500) * BigInt(cp1k);
  return BigInt(cpr) + (extra + 999n) / 1000n;
}

export interface ReceiptValues {
  jobId: string;
  outputHash: string;
  promptTokens: number;
  completionTokens: number;
  finalTokenAt: number | bigint;
}

export const RECEIPT_TYPES = { Receipt: [...receiptTypes.Receipt] };

export function receiptDomain(chainId: bigint, escrowAddress: string): TypedDataDomain {
  return { name: RECEIPT_DOMAIN_NAME, version: RECEIPT_DOMAIN_VERSION, chainId, verifyingContract: escrowAddress };
}

export async function signReceipt(
  signer: HardhatEthersSigner,
  domain: TypedDataDomain,
  receipt: ReceiptValues,
): Promise<string> {
  return signer.signTypedData(domain, RECEIPT_TYPES, receipt);
}

export const STARTING_DEPOSIT = 100n * ONE_STABLECOIN; // 10,000 credits
export const STARTING_CREDITS = STARTING_DEPOSIT / UNIT_PER_CREDIT;
export const WALLET_KEY = "sk-test-wallet-0001";
export const WALLET2_KEY = "sk-test-wallet-0002";
export const RESERVE_FUNDING = 50n * ONE_STABLECOIN;

/** A role held from deployment on (constructor `roles`, DelayedAccessControl); the default admin first. */
function roleGrant(role: string, account: string) {
  return { role, account };
}

/** Constructor `roles` naming only the default admin (DelayedAccessControl). */
export function adminRoles(admin: string) {
  return [roleGrant(DEFAULT_ADMIN_ROLE, admin)];
}

/** The launch catalog argument of ModelCatalog's constructor. */
export function launchModels(specs: ModelSpec[]) {
  return specs.map((spec) => ({ modelId: spec.id, params: modelParams(spec) }));
}

/**
 * Contracts with their roles given at deployment as docs/DESIGN.md lists them (the only grants without the
 * 2-day delay), `launch` as the launch catalog, no workers or wallets yet.
 */
export async function deployContracts(connection: NetworkConnection, launch: ModelSpec[] = []) {
  const { ethers } = connection;
  const signers = await ethers.getSigners();
  const at = (i: number): HardhatEthersSigner => {
    const s = signers[i];
    if (s === undefined) throw new Error(`no signer ${i}`);
    return s;
  };
  const admin = at(0);
  const gateway = at(1);
  const arbiter = at(2);
  const operator = at(2);
  const treasury = at(3);
  const worker1 = at(4);
  const worker2 = at(5);
  const worker3 = at(6);
  const stranger = at(7);
  const wallet = at(12);
  const wallet2 = at(13);
  const outsider = at(15);

  const stablecoin = await ethers.deployContract("Stablecoin", [admin.address]);
  const stakeToken = await ethers.deployContract("StakeToken", [admin.address]);
  const apiKeyRegistry = await ethers.deployContract("ApiKeyRegistry", [admin.address, operator.address]);
  const modelCatalog = await ethers.deployContract("ModelCatalog", [
    admin.address,
    admin.address,
    launchModels(launch),
  ]);
  // Registry, escrow and dispute manager are the admin's next three deployments: the escrow and the registry
  // name the dispute manager's address in their constructors.
  const disputeManagerAddress = getCreateAddress({ from: admin.address, nonce: (await admin.getNonce()) + 2 });
  const adminGrant = roleGrant(DEFAULT_ADMIN_ROLE, admin.address);
  const workerRegistry = await ethers.deployContract("WorkerRegistry", [
    [adminGrant, roleGrant(SLASHER_ROLE, disputeManagerAddress)],
    await stakeToken.getAddress(),
    await modelCatalog.getAddress(),
    treasury.address,
    PARAMS.minStake,
    PARAMS.unbondingDelay,
    PARAMS.disputeWindow,
    PARAMS.arbitrationWindow,
  ]);
  const escrow = await ethers.deployContract("CreditEscrow", [
    [
      adminGrant,
      roleGrant(GATEWAY_ROLE, gateway.address),
      roleGrant(PAUSER_ROLE, admin.address),
      roleGrant(DISPUTE_ROLE, disputeManagerAddress),
    ],
    await stablecoin.getAddress(),
    await apiKeyRegistry.getAddress(),
    await modelCatalog.getAddress(),
    await workerRegistry.getAddress(),
    treasury.address,
    PARAMS.feeBps,
    PARAMS.jobTimeout,
  ]);
  const disputeManager = await ethers.deployContract("DisputeManager", [
    [adminGrant, roleGrant(GATEWAY_ROLE, gateway.address), roleGrant(ARBITER_ROLE, arbiter.address)],
    await escrow.getAddress(),
    await workerRegistry.getAddress(),
  ]);
  if ((await disputeManager.getAddress()) !== disputeManagerAddress) throw new Error("dispute manager address");

  const { chainId } = await ethers.provider.getNetwork();
  const domain = receiptDomain(chainId, await escrow.getAddress());

  return {
    ethers,
    chainId,
    domain,
    admin,
    gateway,
    arbiter,
    operator,
    treasury,
    worker1,
    worker2,
    worker3,
    stranger,
    wallet,
    wallet2,
    outsider,
    stablecoin,
    stakeToken,
    apiKeyRegistry,
    modelCatalog,
    workerRegistry,
    escrow,
    disputeManager,
  };
}

export type Deployed = Awaited<ReturnType<typeof deployContracts>>;

/** Registers `worker` with the minimum stake (minted first) hosting `models`. */
export async function registerWorker(
  d: Deployed,
  worker: HardhatEthersSigner,
  models: ModelSpec[],
  stake = PARAMS.minStake,
) {
  await d.stakeToken.connect(d.admin).mint(worker.address, stake);
  await d.stakeToken.connect(worker).approve(await d.workerRegistry.getAddress(), stake);
  await d.workerRegistry.connect(worker).register(
    `https://worker-${worker.address.slice(2, 8).toLowerCase()}.example`,
    models.map((m) => modelKey(m.id)),
    stake,
  );
  await postBond(d, worker.address);
}

/** Each fixture worker's stablecoin bond: far above anything the fixtures' wallets can be charged. */
export const WORKER_BOND = 1_000_000n * 10n ** 6n;

/** Storage slots of `EscrowStorage._bonds` and `_bondTotal` (the escrow's first base, slots from 0). */
const BONDS_SLOT = 14n;
const BOND_TOTAL_SLOT = 15n;

/**
 * Stand-in for a worker whose seized bond cannot cover restitution, the only way the owed queue is still reached
 * since issue 22 (the seized bond pays first): takes the bond out of the escrow's books and holdings.
 */
export async function dropBond(connection: NetworkConnection, d: Deployed, worker: string) {
  const { ethers, networkHelpers } = connection;
  const escrow = await d.escrow.getAddress();
  const slot = ethers.keccak256(ethers.AbiCoder.defaultAbiCoder().encode(["address", "uint256"], [worker, BONDS_SLOT]));
  const word = BigInt(await ethers.provider.getStorage(escrow, slot));
  const bond = word >> 160n;
  await networkHelpers.setStorageAt(escrow, slot, word & ((1n << 160n) - 1n));
  const total = BigInt(await ethers.provider.getStorage(escrow, BOND_TOTAL_SLOT));
  await networkHelpers.setStorageAt(escrow, BOND_TOTAL_SLOT, total - bond);
  await networkHelpers.impersonateAccount(escrow);
  await networkHelpers.setBalance(escrow, 10n ** 18n);
  await d.stablecoin
    .connect(await ethers.getSigner(escrow))
    .transfer("0x000000000000000000000000000000000000dEaD", bond);
  await networkHelpers.stopImpersonatingAccount(escrow);
}

/** Posts a stablecoin bond for `worker` (minted to the admin, who posts it). */
export async function postBond(d: Deployed, worker: string, amount = WORKER_BOND) {
  await d.stablecoin.connect(d.admin).mint(d.admin.address, amount);
  await d.stablecoin.connect(d.admin).approve(await d.escrow.getAddress(), amount);
  await d.escrow.connect(d.admin).postBond(worker, amount);
}

/** Mints `amount` stablecoin to `wallet` and deposits it into the escrow. */
export async function fund(d: Deployed, wallet: HardhatEthersSigner, amount = STARTING_DEPOSIT) {
  await d.stablecoin.connect(d.admin).mint(wallet.address, amount);
  await d.stablecoin.connect(wallet).approve(await d.escrow.getAddress(), amount);
  await d.escrow.connect(wallet).deposit(amount);
}

/**
 * The usual world: three catalog models (max, lite, pro), worker1 hosting max+lite, worker2 max,
 * worker3 pro; two wallets with 10,000 credits and an active key each; a funded dispute reserve.
 */
export async function deployProtocol(connection: NetworkConnection) {
  const d = await deployContracts(connection, [MODEL_MAX, MODEL_LITE, MODEL_PRO]);
  await registerWorker(d, d.worker1, [MODEL_MAX, MODEL_LITE]);
  await registerWorker(d, d.worker2, [MODEL_MAX]);
  await registerWorker(d, d.worker3, [MODEL_PRO]);
  await fund(d, d.wallet);
  await fund(d, d.wallet2);
  await registerKey(d.apiKeyRegistry.connect(d.wallet), d.wallet.address, keyHash(WALLET_KEY));
  await registerKey(d.apiKeyRegistry.connect(d.wallet2), d.wallet2.address, keyHash(WALLET2_KEY));
  await d.stablecoin.connect(d.admin).mint(d.admin.address, RESERVE_FUNDING);
  await d.stablecoin.connect(d.admin).approve(await d.escrow.getAddress(), RESERVE_FUNDING);
  await d.escrow.connect(d.admin).fundReserve(RESERVE_FUNDING);
  return d;
}

export type Protocol = Awaited<ReturnType<typeof deployProtocol>>;

/** The job every "open job" test starts from: max model, 1,000 max tokens -> 50 credits locked. */
export const OPEN_JOB_ID = jobId(1);
export const OPEN_JOB_MAX_TOKENS = 1_000;
export const OPEN_JOB_LOCKED = expectedPrice(
  MODEL_MAX.creditsPerRequest,
  MODEL_MAX.creditsPer1kTokens,
  OPEN_JOB_MAX_TOKENS,
);

export async function deployWithOpenJob(connection: NetworkConnection) {
  const d = await deployProtocol(connection);
  await d.escrow
    .connect(d.gateway)
    .openJob(OPEN_JOB_ID, keyHash(WALLET_KEY), modelKey(MODEL_MAX.id), OPEN_JOB_MAX_TOKENS);
  const [, , , deadline] = await d.escrow.jobOf(OPEN_JOB_ID);
  return { ...d, deadline };
}

export type WithOpenJob = Awaited<ReturnType<typeof deployWithOpenJob>>;

/** Receipt values for the open job: 700 completion tokens -> 44 credits. */
export const SETTLED_TEXT = "The quick brown fox jumps over the lazy dog.";
export const SETTLED_COMPLETION_TOKENS = 700;
export const SETTLED_CHARGE = expectedPrice(
  MODEL_MAX.creditsPerRequest,
  MODEL_MAX.creditsPer1kTokens,
  SETTLED_COMPLETION_TOKENS,
);

/** The open job settled by worker1; returns the settlement facts a dispute passes back. */
export async function deployWithSettledJob(connection: NetworkConnection) {
  const d = await deployWithOpenJob(connection);
  const { ethers } = connection;
  const block = await ethers.provider.getBlock("latest");
  if (block === null) throw new Error("no block");
  const receipt: ReceiptValues = {
    jobId: OPEN_JOB_ID,
    outputHash: outputHash(SETTLED_TEXT),
    promptTokens: 25,
    completionTokens: SETTLED_COMPLETION_TOKENS,
    finalTokenAt: BigInt(block.timestamp),
  };
  const signature = await signReceipt(d.worker1, d.domain, receipt);
  const mined = await (await d.escrow.connect(d.gateway).settle(receipt, signature)).wait();
  const settledBlock = mined ? await ethers.provider.getBlock(mined.blockNumber) : null;
  if (settledBlock === null) throw new Error("no settlement block");
  /** When the proof was on chain: the dispute window runs from here. */
  const settledAt = BigInt(settledBlock.timestamp);
  const settlement = {
    wallet: d.wallet.address,
    worker: d.worker1.address,
    outputHash: receipt.outputHash,
    creditsCharged: SETTLED_CHARGE,
    finalTokenAt: BigInt(block.timestamp),
  };
  return { ...d, receipt, signature, settlement, settledAt };
}

export type WithSettledJob = Awaited<ReturnType<typeof deployWithSettledJob>>;

export const CLIENT_HASH = outputHash("something else entirely");

/** The settled job with a pending dispute opened by the gateway. */
export async function deployWithDispute(connection: NetworkConnection) {
  const d = await deployWithSettledJob(connection);
  await d.disputeManager.connect(d.gateway).openDispute(OPEN_JOB_ID, d.settlement, CLIENT_HASH);
  const dispute = await d.disputeManager.getDispute(OPEN_JOB_ID);
  return { ...d, disputeDeadline: dispute.deadline };
}

// ------------------------------------------------------------------ commit–reveal and delayed changes

/** ApiKeyRegistry's commitment: keccak256(abi.encode(wallet, keyHash)). */
export function keyCommitment(wallet: string, hash: string): string {
  return keccak256(AbiCoder.defaultAbiCoder().encode(["address", "bytes32"], [wallet, hash]));
}

/** Commits the registry's signer to `hash` (mined; the registration may follow in any later block). */
export async function commitKey(registry: ApiKeyRegistry, wallet: string, hash: string) {
  await (await registry.commitKey(keyCommitment(wallet, hash))).wait();
}

/** Commits to `hash` and registers it in the next block (each automined transaction is its own block). */
export async function registerKey(registry: ApiKeyRegistry, wallet: string, hash: string) {
  await (await registry.commitKey(keyCommitment(wallet, hash))).wait();
  return registry.registerKey(hash);
}

/** Commits to `hash` and rotates to it in the next block. */
export async function rotateKey(registry: ApiKeyRegistry, wallet: string, hash: string) {
  await (await registry.commitKey(keyCommitment(wallet, hash))).wait();
  return registry.rotateKey(hash);
}

/** The change id a schedule transaction announced in `ModelChangeScheduled`. */
export async function changeIdOf(catalog: ModelCatalog, sent: Promise<ContractTransactionResponse>): Promise<bigint> {
  const receipt = await (await sent).wait();
  for (const log of receipt?.logs ?? []) {
    const parsed = catalog.interface.parseLog(log);
    if (parsed?.name === "ModelChangeScheduled") return parsed.args.changeId as bigint;
  }
  throw new Error("no ModelChangeScheduled");
}

/** Moves chain time past the catalog's change delay (the next block is mined at that time). */
export async function waitOutChangeDelay(catalog: ModelCatalog) {
  const provider = catalog.runner?.provider;
  if (!provider || !("send" in provider)) throw new Error("catalog has no provider");
  const rpc = provider as { send(method: string, params: unknown[]): Promise<unknown> };
  await rpc.send("evm_increaseTime", [Number(PARAMS.configChangeDelay)]);
  await rpc.send("evm_mine", []);
}

/** Any contract of DelayedAccessControl (typechain types differ per contract). */
interface DelayedRoles {
  grantRole(role: string, account: string): Promise<ContractTransactionResponse>;
  runner: { provider?: unknown } | null;
}

/** Grants a role the only way left: a first grantRole schedules it, a second one after the delay applies it. */
export async function grantRoleAfterDelay(contract: DelayedRoles, role: string, account: string) {
  await (await contract.grantRole(role, account)).wait();
  const rpc = contract.runner?.provider as { send(method: string, params: unknown[]): Promise<unknown> };
  await rpc.send("evm_increaseTime", [Number(PARAMS.configChangeDelay)]);
  await rpc.send("evm_mine", []);
  return contract.grantRole(role, account);
}

/** Schedules a catalog change, waits out the delay and applies it: what `addModel` etc. did at once before. */
async function applyScheduled(catalog: ModelCatalog, sent: Promise<ContractTransactionResponse>) {
  const changeId = await changeIdOf(catalog, sent);
  await waitOutChangeDelay(catalog);
  return catalog.applyModelChange(changeId);
}

export function addModelAfterDelay(catalog: ModelCatalog, modelId: string, params: ReturnType<typeof modelParams>) {
  return applyScheduled(catalog, catalog.scheduleAddModel(modelId, params));
}

export function updateModelAfterDelay(catalog: ModelCatalog, modelId: string, params: ReturnType<typeof modelParams>) {
  return applyScheduled(catalog, catalog.scheduleUpdateModel(modelId, params));
}

export function retireModelAfterDelay(catalog: ModelCatalog, modelId: string) {
  return applyScheduled(catalog, catalog.scheduleRetireModel(modelId));
}
