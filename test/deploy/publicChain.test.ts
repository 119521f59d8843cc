// `npm run deploy` against a chain that is not the local one, as far as no network allows: a `hardhat node`
// started with Base Sepolia's chain id (84532), a deployer key generated here and funded as a faucet would, passed
// only through the environment. Checks the deployments file, the roles and catalog given at deployment, and that
// each emitted standard-JSON input recompiles (solc 0.8.30, the npm `solc`) to exactly the code on chain, which is
// what an explorer or Sourcify does to verify it.
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { type Address, type Hex, createPublicClient, http, keccak256, parseEther, toBytes, zeroHash } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  LAUNCH_CATALOG,
  apiKeyRegistryAbi,
  creditEscrowAbi,
  disputeManagerAbi,
  modelCatalogAbi,
  modelKeyOf,
  parseDeployment,
  workerRegistryAbi,
  type Deployment,
} from "@credit-metered/client";
import { localAccount } from "@credit-metered/client/local";
import { startChain, type RunningChain } from "../../scripts/stack/startChain.js";
import { repoRoot } from "../../scripts/stack/repoRoot.js";
import { findFreePort } from "../../scripts/stack/ports.js";
import { DEPLOYABLES } from "../../scripts/deploy/deployables.js";

const PUBLIC_CHAIN_ID = 84_532;
const run = promisify(execFile);
const solc = createRequire(import.meta.url)("solc") as { compile(input: string): string };

/** Generated here and handed to the deployment only through its environment. */
const deployerKey = generatePrivateKey();
const deployer = privateKeyToAccount(deployerKey);
const roles = {
  gateway: privateKeyToAccount(generatePrivateKey()).address,
  gateway2: privateKeyToAccount(generatePrivateKey()).address,
  arbiter: privateKeyToAccount(generatePrivateKey()).address,
  operator: privateKeyToAccount(generatePrivateKey()).address,
  treasury: privateKeyToAccount(generatePrivateKey()).address,
};

let chain: RunningChain;
let workDir: string;
let deployment: Deployment;

function deployCli(args: string[], env: Record<string, string> = {}) {
  return run(path.join(repoRoot, "node_modules/.bin/tsx"), ["scripts/deploy/cli.ts", ...args], {
    cwd: repoRoot,
    // Only what the deployment needs: no DEPLOYER_PRIVATE_KEY leaks in from the caller's shell.
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", ...env },
    timeout: 180_000,
  });
}

const publicArgs = () => [
  "--rpc-url",
  chain.rpcUrl,
  "--chain-id",
  String(PUBLIC_CHAIN_ID),
  "--gateway",
  roles.gateway,
  "--gateway",
  roles.gateway2,
  "--arbiter",
  roles.arbiter,
  "--operator",
  roles.operator,
  "--treasury",
  roles.treasury,
];

const client = () => createPublicClient({ transport: http(chain.rpcUrl) });
const role = (name: string): Hex => keccak256(toBytes(name));

beforeAll(async () => {
  workDir = mkdtempSync(path.join(tmpdir(), "deploy-public-"));
  chain = await startChain({
    port: await findFreePort(8960, 8979),
    chainId: PUBLIC_CHAIN_ID,
    logFile: path.join(workDir, "chain.log"),
  });
  // A faucet's part: the deployer holds ETH, nothing else.
  await client().request({
    method: "hardhat_setBalance" as never,
    params: [deployer.address, `0x${parseEther("10").toString(16)}`] as never,
  });
  const out = path.join(workDir, "deployments.json");
  await deployCli([...publicArgs(), "--out", out, "--standard-json-dir", path.join(workDir, "standard-json")], {
    DEPLOYER_PRIVATE_KEY: deployerKey,
  });
  deployment = parseDeployment(JSON.parse(readFileSync(out, "utf8")));
});

afterAll(async () => {
  await chain?.stop();
  if (workDir) rmSync(workDir, { recursive: true, force: true });
});

describe("npm run deploy on a public chain id", () => {
  it("writes a deployments file for that chain with the block the indexer starts from", async () => {
    expect(deployment.chainId).toBe(PUBLIC_CHAIN_ID);
    expect(deployment.startBlock).toBeGreaterThan(0);
    const first = await client().getTransactionReceipt({
      hash: (await firstDeploymentTx()) as Hex,
    });
    expect(Number(first.blockNumber)).toBeGreaterThanOrEqual(deployment.startBlock);
    for (const address of Object.values(deployment.contracts)) {
      expect(await client().getCode({ address })).toMatch(/^0x[0-9a-f]{2,}/);
    }
  });

  it("makes the deployer admin and gives every role named on the command line at deployment", async () => {
    const c = deployment.contracts;
    expect(deployment.roles.admin).toBe(deployer.address);
    for (const gateway of [roles.gateway, roles.gateway2]) {
      expect(await hasRole(c.creditEscrow, creditEscrowAbi, "GATEWAY_ROLE", gateway)).toBe(true);
      expect(await hasRole(c.disputeManager, disputeManagerAbi, "GATEWAY_ROLE", gateway)).toBe(true);
    }
    expect(await hasRole(c.disputeManager, disputeManagerAbi, "ARBITER_ROLE", roles.arbiter)).toBe(true);
    expect(await hasRole(c.apiKeyRegistry, apiKeyRegistryAbi, "OPERATOR_ROLE", roles.operator)).toBe(true);
    expect(await hasRole(c.workerRegistry, workerRegistryAbi, "SLASHER_ROLE", c.disputeManager)).toBe(true);
    expect(await hasRole(c.creditEscrow, creditEscrowAbi, "DISPUTE_ROLE", c.disputeManager)).toBe(true);
    expect(
      await client().readContract({ address: c.creditEscrow, abi: creditEscrowAbi, functionName: "treasury" }),
    ).toBe(roles.treasury);
  });

  it("gives no role to any of Hardhat's public local accounts", async () => {
    const c = deployment.contracts;
    for (const index of [0, 1, 2, 3]) {
      const local = localAccount(index).address;
      expect(await hasRole(c.creditEscrow, creditEscrowAbi, "GATEWAY_ROLE", local)).toBe(false);
      expect(await hasRole(c.creditEscrow, creditEscrowAbi, zeroHash, local)).toBe(false);
    }
  });

  it("lists the launch catalog at deployment", async () => {
    for (const model of LAUNCH_CATALOG) {
      const listed = await client().readContract({
        address: deployment.contracts.modelCatalog,
        abi: modelCatalogAbi,
        functionName: "isListed",
        args: [modelKeyOf(model.id)],
      });
      expect(listed, model.id).toBe(true);
    }
  });

  it("emits standard-JSON inputs that recompile to the code on chain", async () => {
    const dir = path.join(workDir, "standard-json");
    const index = JSON.parse(readFileSync(path.join(dir, "index.json"), "utf8")) as {
      chainId: number;
      contracts: { contract: string; address: Address; fullyQualifiedName: string; compilerVersion: string }[];
    };
    expect(index.chainId).toBe(PUBLIC_CHAIN_ID);
    expect(index.contracts.map((entry) => entry.contract)).toEqual(DEPLOYABLES.map((d) => d.name));
    for (const entry of index.contracts) {
      expect(entry.compilerVersion).toMatch(/^v0\.8\.30\+commit\./);
      const input = JSON.parse(readFileSync(path.join(dir, `${entry.contract}.json`), "utf8")) as {
        settings: Record<string, unknown>;
      };
      const [source, name] = splitName(entry.fullyQualifiedName);
      input.settings.outputSelection = { [source]: { [name]: ["evm.deployedBytecode"] } };
      const output = JSON.parse(solc.compile(JSON.stringify(input))) as {
        errors?: { severity: string; formattedMessage: string }[];
        contracts: Record<
          string,
          Record<
            string,
            {
              evm: {
                deployedBytecode: {
                  object: string;
                  immutableReferences?: Record<string, { start: number; length: number }[]>;
                };
              };
            }
          >
        >;
      };
      const errors = (output.errors ?? []).filter((e) => e.severity === "error");
      expect(errors.map((e) => e.formattedMessage)).toEqual([]);
      const compiled = output.contracts[source]?.[name]?.evm.deployedBytecode;
      if (!compiled) throw new Error(`${entry.fullyQualifiedName} not in the output`);
      const onChain = ((await client().getCode({ address: entry.address })) ?? "0x").slice(2);
      expect(withoutImmutables(onChain, compiled.immutableReferences), entry.contract).toBe(compiled.object);
    }
  });

  it("refuses an RPC URL that serves another chain id", async () => {
    const attempt = deployCli(
      [...publicArgs().map((a) => (a === String(PUBLIC_CHAIN_ID) ? "8453" : a)), "--out", path.join(workDir, "x.json")],
      { DEPLOYER_PRIVATE_KEY: deployerKey },
    );
    await expect(attempt).rejects.toThrow(/is chain 84532, not 8453/);
  });

  it("refuses a public chain without a deployer key in the environment or without every role", async () => {
    const out = ["--out", path.join(workDir, "y.json")];
    await expect(deployCli([...publicArgs(), ...out])).rejects.toThrow(/DEPLOYER_PRIVATE_KEY/);
    const withoutTreasury = publicArgs().slice(0, -2);
    await expect(deployCli([...withoutTreasury, ...out], { DEPLOYER_PRIVATE_KEY: deployerKey })).rejects.toThrow(
      /--treasury/,
    );
  });
});

async function hasRole(address: Address, abi: typeof creditEscrowAbi | readonly unknown[], name: string, who: Address) {
  return client().readContract({
    address,
    abi: abi as typeof creditEscrowAbi,
    functionName: "hasRole",
    args: [name === zeroHash ? zeroHash : role(name), who],
  });
}

/** The deployer's first transaction (its nonce 0): the first contract creation. */
async function firstDeploymentTx(): Promise<string> {
  const latest = await client().getBlockNumber();
  for (let n = 1n; n <= latest; n++) {
    const block = await client().getBlock({ blockNumber: n, includeTransactions: true });
    const tx = block.transactions.find((t) => t.from.toLowerCase() === deployer.address.toLowerCase());
    if (tx) return tx.hash;
  }
  throw new Error("no deployment transaction");
}

function splitName(fullyQualifiedName: string): [string, string] {
  const at = fullyQualifiedName.lastIndexOf(":");
  return [fullyQualifiedName.slice(0, at), fullyQualifiedName.slice(at + 1)];
}

/** On-chain code with the immutables' bytes zeroed, as solc leaves them in `deployedBytecode`. */
function withoutImmutables(code: string, references: Record<string, { start: number; length: number }[]> = {}) {
  let out = code;
  for (const ranges of Object.values(references)) {
    for (const { start, length } of ranges) {
      out = out.slice(0, start * 2) + "0".repeat(length * 2) + out.slice((start + length) * 2);
    }
  }
  return out;
}
