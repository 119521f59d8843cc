// `npm run deploy -- --rpc-url http://127.0.0.1:8545 --out .local/deployments.json`
// Deploys with the local Hardhat accounts unless DEPLOYER_PRIVATE_KEY and the role flags say otherwise.
import { parseArgs } from "node:util";
import { type Address, getAddress } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { z } from "zod";
import { type DeployAccounts, deployContracts, localDeployAccounts } from "./deployContracts.js";

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
  },
  strict: true,
});
const args = argsSchema.parse(values);
const env = envSchema.parse(process.env);

const local = localDeployAccounts();
const accounts: DeployAccounts = {
  deployer: env.DEPLOYER_PRIVATE_KEY ? privateKeyToAccount(env.DEPLOYER_PRIVATE_KEY as `0x${string}`) : local.deployer,
  gateway: args.gateway ?? local.gateway,
  arbiter: args.arbiter ?? local.arbiter,
  operator: args.operator ?? local.operator,
  treasury: args.treasury ?? local.treasury,
};

const deployment = await deployContracts({
  rpcUrl: args["rpc-url"],
  outFile: args.out,
  accounts,
  ...(args["job-timeout"] ? { params: { jobTimeout: args["job-timeout"] } } : {}),
});
console.log(`deployed to chain ${deployment.chainId}, wrote ${args.out}`);
for (const [name, addr] of Object.entries(deployment.contracts)) console.log(`  ${name.padEnd(16)} ${addr}`);
