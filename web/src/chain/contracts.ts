// The contracts' ABIs and pure helpers, shared with every other component (contracts/client). Only the
// browser-safe modules are imported here (deployment.ts and keyHash.ts use Node APIs).
export {
  apiKeyRegistryAbi,
  creditEscrowAbi,
  disputeManagerAbi,
  modelCatalogAbi,
  stablecoinAbi,
  workerRegistryAbi,
} from "../../../contracts/client/abis";
export { bytes32ToJobId, isJobId, isJobIdBytes32, jobIdToBytes32 } from "../../../contracts/client/jobId";
export { TIERS, tierName } from "../../../contracts/client/tiers";
export { UNIT_PER_CREDIT, MIN_DEPOSIT, BPS } from "../../../contracts/client/pricing";
