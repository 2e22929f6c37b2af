/**
 * Chain names, as the relayer says them: GET /get_node_chain_config's `chain_name`, and the names
 * actions ask Lit.Actions.getRpcUrl({chain}) for (VESTA_ACTION_RPC_URLS; in development the
 * relayer's own chain is there under this name, "local" for the local Hardhat chain).
 */
export const CHAIN_NAMES: Readonly<Record<string, string>> = { "1": "ethereum", "8453": "base", "84532": "base-sepolia", "31337": "local" };

/** The name of chain `chainId` ("chain-<id>" for one without a name). */
export const chainName = (chainId: bigint | number): string => CHAIN_NAMES[chainId.toString()] ?? `chain-${chainId}`;

/** What a chain name may be in VESTA_ACTION_RPC_URLS: lower case letters, digits and dashes. */
export const CHAIN_NAME = /^[a-z0-9][a-z0-9-]{0,63}$/;
