/** The deployable contracts, their source files below `contracts/` and the names of their generated ABIs. */
export const DEPLOYABLES = [
  { name: "Stablecoin", source: "tokens/Stablecoin.sol", abiExport: "stablecoinAbi" },
  { name: "StakeToken", source: "tokens/StakeToken.sol", abiExport: "stakeTokenAbi" },
  { name: "ApiKeyRegistry", source: "ApiKeyRegistry.sol", abiExport: "apiKeyRegistryAbi" },
  { name: "ModelCatalog", source: "ModelCatalog.sol", abiExport: "modelCatalogAbi" },
  { name: "WorkerRegistry", source: "WorkerRegistry.sol", abiExport: "workerRegistryAbi" },
  { name: "CreditEscrow", source: "CreditEscrow.sol", abiExport: "creditEscrowAbi" },
  { name: "DisputeManager", source: "DisputeManager.sol", abiExport: "disputeManagerAbi" },
] as const;

export type DeployableName = (typeof DEPLOYABLES)[number]["name"];
