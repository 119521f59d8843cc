// The client library's browser-safe entry: ABIs, ids, hashes, receipts, pricing, tiers, statuses, permits, event
// decoding, the deployments schema. Nothing here may import `node:*` or the `./node` and `./local` entries
// (eslint.config.js enforces it): the web app bundles it.
export {
  apiKeyRegistryAbi,
  creditEscrowAbi,
  disputeManagerAbi,
  modelCatalogAbi,
  stablecoinAbi,
  stakeTokenAbi,
  workerRegistryAbi,
} from "./abis.js";
export { type Deployment, type DeploymentJson, deploymentSchema, parseDeployment } from "./deployment.js";
export {
  type JobId,
  JOB_CURSOR_PATTERN,
  JOB_ID_PATTERN,
  JOB_ID_PREFIX,
  JobIdError,
  ULID_PATTERN_SOURCE,
  bytes32ToJobId,
  isJobId,
  isJobIdBytes32,
  jobIdToBytes32,
  newJobId,
} from "./jobId.js";
export {
  API_KEY_ALPHABET,
  API_KEY_PATTERN,
  API_KEY_PREFIX,
  API_KEY_RANDOM_LENGTH,
  generateApiKey,
  isApiKeyFormat,
  keyCommitmentOf,
  keyHashOf,
  modelKeyOf,
} from "./keyHash.js";
export {
  type Receipt,
  type ReceiptDomainParams,
  type Settlement,
  RECEIPT_DOMAIN_NAME,
  RECEIPT_DOMAIN_VERSION,
  MAX_LOCK_DELAY_SECONDS,
  fromProofHash,
  isProofHash,
  outputHashOf,
  receiptDigest,
  receiptDomain,
  receiptJsonSchema,
  receiptToJson,
  receiptTypes,
  recoverReceiptSigner,
  signReceipt,
  toProofHash,
} from "./receipt.js";
export {
  type ModelPrices,
  BPS,
  CREDITS_PER_USDG,
  LONG_COMPLETION_THRESHOLD,
  MIN_DEPOSIT,
  TOKENS_PER_PRICE_UNIT,
  UNIT_PER_CREDIT,
  chargeFor,
  creditsToUnits,
  creditsToUsdg,
  escrowFor,
  priceOf,
  splitCharge,
} from "./pricing.js";
export { type TierName, TIERS, isTierName, tierIndex, tierName } from "./tiers.js";
export { type CatalogModel, LAUNCH_CATALOG, TIER_PRICES } from "./launchCatalog.js";
export {
  type ChainJobStatus,
  type DisputeOutcome,
  type IssuedKeyStatus,
  type JobState,
  type KeyStatus,
  CHAIN_JOB_STATUSES,
  DISPUTE_OUTCOMES,
  ISSUED_KEY_STATUSES,
  JOB_STATES,
  KEY_STATUSES,
} from "./statuses.js";
export {
  type Permit,
  type PermitDomainParams,
  PERMIT_TYPES,
  PERMIT_VERSION,
  permitSignatureParts,
  permitTypedData,
} from "./permit.js";
export {
  type ContractName,
  type ProductContracts,
  type ProductEvent,
  PRODUCT_ABIS,
  bigArg,
  contractNameOf,
  decodeProductLogs,
  formatUsdg,
  hexArg,
  numArg,
} from "./events.js";
