import { readFileSync } from "node:fs";
import { z } from "zod";

const address = z.string().regex(/^0x[0-9a-fA-F]{40}$/) as z.ZodType<`0x${string}`>;

/** The part of the deployments file (docs/DESIGN.md "Deployments file") the indexer needs. */
const deploymentsSchema = z.object({
  chainId: z.number().int().positive(),
  startBlock: z.number().int().nonnegative(),
  contracts: z.object({
    apiKeyRegistry: address,
    modelCatalog: address,
    workerRegistry: address,
    creditEscrow: address,
    disputeManager: address,
  }),
});

export type IndexedDeployments = z.infer<typeof deploymentsSchema>;

/** Reads and validates the deployments JSON written by `scripts/deploy/deployContracts.ts`. */
export function readDeployments(file: string): IndexedDeployments {
  const parsed = deploymentsSchema.safeParse(JSON.parse(readFileSync(file, "utf8")));
  if (!parsed.success) throw new Error(`invalid deployments file ${file}: ${z.prettifyError(parsed.error)}`);
  return parsed.data;
}
