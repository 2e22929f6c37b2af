/** The chains a chain-event trigger may watch (each needs TRIGGERS_RPC_<CHAIN>); pure, so the dashboard shares it. */
export const CHAINS = ["ethereum", "base", "arbitrum", "bsc", "polygon"] as const;
export type ChainName = (typeof CHAINS)[number];
