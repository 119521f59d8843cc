// Local: `npm run deploy -- --rpc-url http://127.0.0.1:8545 --out .local/deployments.json` (Hardhat's local accounts).
// Public chain (README, "Running on a public chain"):
//   DEPLOYER_PRIVATE_KEY=0x… npm run deploy -- --rpc-url https://sepolia.base.org --chain-id 84532 \
//     --gateway 0x… [--gateway 0x…] --arbiter 0x… --operator 0x… --treasury 0x… --out deployments/84532.json
// The deployer key comes from the environment only (never a file in the repo). On any chain but Hardhat's local one
// every role must be named and the deployer key given: the local accounts' keys are public.
// Besides the deployments file, it writes each contract's standard-JSON input for explorer and Sourcify
// verification to `<folder of --out>/<chainId>/standard-json/` (or `--standard-json-dir`).
// `--gateway-count N` (local) also grants the gateway roles to local gateway keys 1 … N-1 (several gateway
// processes, or test signers); `--spare-models N` lists N spare models per test shape, times its weight (test stacks only).
import path from "node:path";
import { parseArgs } from "node:util";
import { type Address, getAddress } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { z } from "zod";
import { type DeployAccounts, deployContracts, localDeployAccounts } from "./deployContracts.js";
import { MAX_LOCAL_GATEWAYS, extraLocalGatewayAddresses } from "./localGateways.js";
import { spareCatalog } from "./spareModels.js";
import { writeStandardJsonInputs } from "./standardJson.js";
import { LAUNCH_CATALOG } from "@credit-metered/client";

/** ETH each extra local gateway signer gets for gas. */
const EXTRA_GATEWAY_ETH = 1_000n * 10n ** 18n;
/** Hardhat's and anvil's local chain id: the only chain the public local accounts may deploy to. */
const LOCAL_CHAIN_ID = 31_337;

const address = z
  .string()
  .regex(/^0x[0-9a-fA-F]{40}$/)
  .transform((value) => getAddress(value) as Address);

const argsSchema = z.object({
  "rpc-url": z.string().url().default("http://127.0.0.1:8545"),
  /** The chain the RPC URL must serve; the deployment refuses another (default: local 31337). */
  "chain-id": z.coerce.number().int().positive().default(LOCAL_CHAIN_ID),
  out: z.string().min(1).default(".local/deployments.json"),
  gateway: z.array(address).default([]),
  arbiter: address.optional(),
  operator: address.optional(),
  treasury: address.optional(),
  /** Seconds before an open job may be refunded (default 120, the spec's); shorter only for test stacks. */
  "job-timeout": z.coerce.number().int().positive().optional(),
  /** Gateway processes of a local stack: gateways 1 … N-1 get the gateway roles too (scripts/deploy/localGateways.ts). */
  "gateway-count": z.coerce.number().int().min(1).max(MAX_LOCAL_GATEWAYS).default(1),
  "spare-models": z.coerce.number().int().min(0).max(32).default(0),
  "standard-json-dir": z.string().min(1).optional(),
});
const envSchema = z.object({
  DEPLOYER_PRIVATE_KEY: z
    .string()
    .regex(/^0x[0-9a-fA-F]{64}$/)
    .optional(),
});

const { values } = parseArgs({
  options: {
    "rpc-url": { type: "string" },
    "chain-id": { type: "string" },
    out: { type: "string" },
    gateway: { type: "string", multiple: true },
    arbiter: { type: "string" },
    operator: { type: "string" },
    treasury: { type: "string" },
    "job-timeout": { type: "string" },
    "gateway-count": { type: "string" },
    "spare-models": { type: "string" },
    "standard-json-dir": { type: "string" },
  },
  strict: true,
});
const args = argsSchema.parse(values);
const env = envSchema.parse(process.env);
const chainId = args["chain-id"];
const isLocal = chainId === LOCAL_CHAIN_ID;

function accountsFor(): DeployAccounts {
  const local = localDeployAccounts();
  const [gateway, ...extraGateways] = args.gateway;
  if (isLocal) {
    return {
      deployer: env.DEPLOYER_PRIVATE_KEY
        ? privateKeyToAccount(env.DEPLOYER_PRIVATE_KEY as `0x${string}`)
        : local.deployer,
      gateway: gateway ?? local.gateway,
      extraGateways: [...extraGateways, ...extraLocalGatewayAddresses(args["gateway-count"])],
      arbiter: args.arbiter ?? local.arbiter,
      operator: args.operator ?? local.operator,
      treasury: args.treasury ?? local.treasury,
    };
  }
  const missing = [
    env.DEPLOYER_PRIVATE_KEY ? null : "DEPLOYER_PRIVATE_KEY (environment)",
    gateway ? null : "--gateway",
    args.arbiter ? null : "--arbiter",
    args.operator ? null : "--operator",
    args.treasury ? null : "--treasury",
  ].filter((name): name is string => name !== null);
  if (missing.length > 0) throw new Error(`chain ${chainId} is not local: give ${missing.join(", ")}`);
  if (args["gateway-count"] > 1 || args["spare-models"] > 0) {
    throw new Error("--gateway-count and --spare-models are for local stacks only");
  }
  return {
    deployer: privateKeyToAccount(env.DEPLOYER_PRIVATE_KEY as `0x${string}`),
    gateway: gateway as Address,
    extraGateways,
    arbiter: args.arbiter as Address,
    operator: args.operator as Address,
    treasury: args.treasury as Address,
  };
}

const constructorArguments: Record<string, string> = {};
const deployment = await deployContracts({
  onConstructorArguments: (name, encoded) => {
    constructorArguments[name] = encoded;
  },
  rpcUrl: args["rpc-url"],
  outFile: args.out,
  accounts: accountsFor(),
  expectedChainId: chainId,
  ...(args["spare-models"] > 0 ? { models: [...LAUNCH_CATALOG, ...spareCatalog(args["spare-models"])] } : {}),
  ...(args["job-timeout"] ? { params: { jobTimeout: args["job-timeout"] } } : {}),
  ...(isLocal && args["gateway-count"] > 1 ? { fundExtraGatewaysWei: EXTRA_GATEWAY_ETH } : {}),
});
// Beside the deployments file: `--out deployments/84532.json` → `deployments/84532/standard-json/`.
const standardJsonDir =
  args["standard-json-dir"] ?? path.join(path.dirname(args.out), String(chainId), "standard-json");
const written = writeStandardJsonInputs(deployment, standardJsonDir, constructorArguments);
console.log(`deployed to chain ${deployment.chainId} from block ${deployment.startBlock}, wrote ${args.out}`);
for (const [name, addr] of Object.entries(deployment.contracts)) console.log(`  ${name.padEnd(16)} ${addr}`);
console.log(`standard-JSON inputs for verification: ${written.length} files in ${standardJsonDir}`);
