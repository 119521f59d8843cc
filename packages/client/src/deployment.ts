import { type Address, type Hex, getAddress } from "viem";
import { z } from "zod";

const address = z
  .string()
  .regex(/^0x[0-9a-fA-F]{40}$/, "expected an address")
  .transform((value) => getAddress(value) as Address);
const bytes32 = z
  .string()
  .regex(/^0x[0-9a-fA-F]{64}$/, "expected 0x + 64 hex digits")
  .transform((value) => value as Hex);
const seconds = z.number().int().nonnegative();
const bps = z.number().int().min(0).max(10_000);

/** The deployments file (docs/DESIGN.md, "Deployments file"). */
export const deploymentSchema = z.object({
  chainId: z.number().int().positive(),
  startBlock: z.number().int().nonnegative(),
  contracts: z.object({
    stablecoin: address,
    stakeToken: address,
    apiKeyRegistry: address,
    modelCatalog: address,
    workerRegistry: address,
    creditEscrow: address,
    disputeManager: address,
  }),
  roles: z.object({
    admin: address,
    gateway: address,
    arbiter: address,
    operator: address,
    treasury: address,
  }),
  params: z.object({
    jobTimeout: seconds,
    disputeWindow: seconds,
    arbitrationWindow: seconds,
    unbondingDelay: seconds,
    /** Stake-token units as a decimal string (exceeds a JS number). */
    minStake: z.string().regex(/^\d+$/),
    slashBps: bps,
    feeBps: bps,
  }),
  models: z.array(z.object({ id: z.string().min(1), key: bytes32, index: z.number().int().positive() })),
});

export type Deployment = z.infer<typeof deploymentSchema>;
/** The JSON as written (before address checksumming). */
export type DeploymentJson = z.input<typeof deploymentSchema>;

/** Parses a deployments object (throws a `ZodError` naming the bad field). */
export function parseDeployment(value: unknown): Deployment {
  return deploymentSchema.parse(value);
}
