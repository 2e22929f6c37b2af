/**
 * The deployment's JSON-RPC URLs as actions reach them (VESTA_ACTION_RPC_URLS; Lit.Actions.getRpcUrl
 * answers them by chain name). Such a URL may be private or loopback (the local chain under `npm
 * start` is 127.0.0.1:8545), so fetch.ts lets exactly these URLs through the egress policy: the
 * same URL, character for character once parsed (scheme, credentials, host, port, path and query;
 * the fragment is never sent), every redirect hop checked again as any other URL. What an action may
 * send to one is a single JSON-RPC request (a batch would be many calls for one fetch of the run's
 * budget) of a method that reads the chain or sends a transaction the action signed itself: none of
 * the node's own accounts (eth_sendTransaction, eth_sign*, eth_accounts), nor its admin, debug,
 * personal, txpool or test-chain controls (hardhat_*, evm_*, anvil_*). The node receives the request
 * as checked, written again.
 */
import { jsonTextValues } from "../../../protocol/json";

/** The key two URLs share when they are the same RPC URL. */
export function rpcUrlKey(url: string | URL): string {
  const u = new URL(url);
  u.hash = "";
  return u.href;
}

/** Most JSON values in one request to an RPC URL (an eth_call or a log filter holds a few dozen). */
const MAX_REQUEST_VALUES = 1024;
const OTHER_METHODS = new Set(["net_version", "net_listening", "net_peercount", "web3_clientversion", "web3_sha3"]);
/** eth_ methods that use the node's own accounts or mining (compared in lower case: some nodes ignore case). */
const NODE_ACCOUNTS = /^eth_(sign|sendtransaction$|accounts$|requestaccounts$|coinbase$|submit|mining$|hashrate$)/;

/**
 * The request to send to a configured RPC URL: the action's JSON-RPC request written again (so the
 * node parses exactly what was checked: no duplicate "method" keys, escapes or comments read
 * otherwise by another parser), or why it may not be sent.
 */
export function rpcRequest(method: string, body: string | undefined): { body: string } | { refused: string } {
  if (method !== "POST") return { refused: `only JSON-RPC requests (POST) may be sent to the deployment's RPC URL, not ${method}` };
  if (body === undefined || jsonTextValues(body, MAX_REQUEST_VALUES) > MAX_REQUEST_VALUES) return { refused: `a request to the deployment's RPC URL holds at most ${MAX_REQUEST_VALUES} JSON values` };
  let payload: unknown;
  try {
    payload = JSON.parse(body);
  } catch {
    return { refused: "a request to the deployment's RPC URL must be JSON-RPC (the body is not JSON)" };
  }
  if (Array.isArray(payload)) return { refused: "JSON-RPC batches are not accepted by the deployment's RPC URL: send one request per fetch (each counts against the run's fetches)" };
  const name = payload !== null && typeof payload === "object" ? (payload as { method?: unknown }).method : undefined;
  if (typeof name !== "string") return { refused: "a request to the deployment's RPC URL must be JSON-RPC (no method)" };
  const lower = name.toLowerCase();
  if ((lower.startsWith("eth_") && !NODE_ACCOUNTS.test(lower)) || OTHER_METHODS.has(lower)) return { body: JSON.stringify(payload) };
  return { refused: `the JSON-RPC method ${JSON.stringify(name.slice(0, 64))} may not be sent to the deployment's RPC URL (reads, eth_sendRawTransaction and the like only; not the node's accounts or controls)` };
}
