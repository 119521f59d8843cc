// The TypeScript client library of the contracts: ABIs, ids, hashes, receipts, pricing, deployments.
export {
  apiKeyRegistryAbi,
  creditEscrowAbi,
  disputeManagerAbi,
  modelCatalogAbi,
  stablecoinAbi,
  stakeTokenAbi,
  workerRegistryAbi,
} from "./abis.js";
export {
  type Deployment,
  type DeploymentJson,
  deploymentSchema,
  loadDeployment,
  parseDeployment,
} from "./deployment.js";
export {
  type JobId,
  JOB_ID_PREFIX,
  JobIdError,
  bytes32ToJobId,
  isJobId,
  isJobIdBytes32,
  jobIdToBytes32,
  newJobId,
} from "./jobId.js";
export {
  API_KEY_PREFIX,
  API_KEY_RANDOM_LENGTH,
  generateApiKey,
  isApiKeyFormat,
  keyHashOf,
  modelKeyOf,
} from "./keyHash.js";
export {
  type Receipt,
  type ReceiptDomainParams,
  type Settlement,
  RECEIPT_DOMAIN_NAME,
  RECEIPT_DOMAIN_VERSION,
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
export {
  type LocalAccounts,
  HARDHAT_MNEMONIC,
  LOCAL_ACCOUNT_INDEX,
  LOCAL_WORKER_COUNT,
  localAccount,
  localAccounts,
  localPrivateKey,
  localWorkerAccounts,
} from "./localAccounts.js";
export { type CatalogModel, LAUNCH_CATALOG, TIER_PRICES } from "./launchCatalog.js";
