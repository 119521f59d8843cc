// Typed ABIs of the deployed contracts (implementation ABIs, so OpenZeppelin errors such as EnforcedPause decode too).
export { apiKeyRegistryAbi, creditEscrowAbi, disputeManagerAbi } from "@credit-metered/client";
