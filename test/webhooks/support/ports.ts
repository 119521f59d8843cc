// Ports of the webhook tests: 8760-8789 are reserved for them.
export const CHAIN_PORT = 8760;
export const POSTGRES_PORT = 8761;
export const INDEXER_PORT = 8762;
/** Receivers (HTTPS test doubles) take ports from here up to 8789. */
export const RECEIVER_PORTS = { from: 8770, to: 8789 };
