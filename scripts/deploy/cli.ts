// `npm run deploy -- --rpc-url http://127.0.0.1:8545 --out .local/deployments.json`
// Deploys with the local Hardhat accounts unless DEPLOYER_PRIVATE_KEY and the role flags say otherwise.
// `--gateway-count N` also grants the gateway roles to local gateway keys 1 … N-1 (several gateway processes).
import { parseArgs } from "node:util";
import { type Address, getAddress } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { z } from "zod";
import { type DeployAccounts, deployContracts, localDeployAccounts } from "./deployContracts.js";
import { MAX_LOCAL_GATEWAYS, extraLocalGatewayAddresses } from "./localGateways.js";

/** ETH each extra local gateway signer gets for gas. */
const EXTRA_GATEWAY_ETH = 1_000n * 10n ** 18n;

const address = z
  .string()
  .regex(/^0x[0-9a-fA-F]{40}$/)
  .transform((value) => getAddress(value) as Address);

const argsSchema = z.object({
  "rpc-url": z.string().url().default("http://127.0.0.1:8545"),
  out: z.string().min(1).default(".local/deployments.json"),
  gateway: address.optional(),
  arbiter: address.optional(),
  operator: address.optional(),
  treasury: address.optional(),
  /** Seconds before an open job may be refunded (default 120, the spec's); shorter only for test stacks. */
  "job-timeout": z.coerce.number().int().positive().optional(),
  /** Gateway processes of a local stack: gateways 1 … N-1 get the gateway roles too (scripts/deploy/localGateways.ts). */
  "gateway-count": z.coerce.number().int().min(1).max(MAX_LOCAL_GATEWAYS).default(1),
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
    out: { type: "string" },
    gateway: { type: "string" },
    arbiter: { type: "string" },
    operator: { type: "string" },
    treasury: { type: "string" },
    "job-timeout": { type: "string" },
    "gateway-count": { type: "string" },
  },
  strict: true,
});
const args = argsSchema.parse(values);
const env = envSchema.parse(process.env);

const local = localDeployAccounts();
const accounts: DeployAccounts = {
  deployer: env.DEPLOYER_PRIVATE_KEY ? privateKeyToAccount(env.DEPLOYER_PRIVATE_KEY as `0x${string}`) : local.deployer,
  gateway: args.gateway ?? local.gateway,
  extraGateways: extraLocalGatewayAddresses(args["gateway-count"]),
  arbiter: args.arbiter ?? local.arbiter,
  operator: args.operator ?? local.operator,
  treasury: args.treasury ?? local.treasury,
};

const deployment = await deployContracts({
  rpcUrl: args["rpc-url"],
  outFile: args.out,
  accounts,
  ...(args["job-timeout"] ? { params: { jobTimeout: args["job-timeout"] } } : {}),
  ...(args["gateway-count"] > 1 ? { fundExtraGatewaysWei: EXTRA_GATEWAY_ETH } : {}),
});
console.log(`deployed to chain ${deployment.chainId}, wrote ${args.out}`);
for (const [name, addr] of Object.entries(deployment.contracts)) console.log(`  ${name.padEnd(16)} ${addr}`);
