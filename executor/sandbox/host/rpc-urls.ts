/**
 * The deployment's JSON-RPC URLs as actions reach them (VESTA_ACTION_RPC_URLS; Lit.Actions.getRpcUrl
 * answers them by chain name). Such a URL may be private or loopback (the local chain under `npm
 * start` is 127.0.0.1:8545), so fetch.ts lets exactly these URLs through the egress policy: the
 * same URL, character for character once parsed (scheme, credentials, host, port, path and query;
 * the fragment is never sent), every redirect hop checked again as any other URL. What an action may
 * send to one is a single JSON-RPC request (a batch would be many calls for one fetch of the run's
 * budget) of one of the methods ethers v5's JsonRpcProvider and Contract send (RPC_METHODS, spelled
 * exactly): reads, and eth_sendRawTransaction of a transaction the action signed itself, not from
 * one of the service's own accounts and within the gas cap (./rpc-guard.ts). Nothing else: not the
 * node's own accounts (eth_sendTransaction, eth_sign*, eth_accounts), not its filters or
 * subscriptions (state kept on the node), not its admin, debug or test-chain controls. The node
 * receives the request as checked, written again: `jsonrpc`, `id`, `method` and `params` only.
 */
import { jsonTextValues } from "../../../protocol/json";
import { cappedCall, currentRpcGuard, rawTransactionRefusal } from "./rpc-guard";

/** The key two URLs share when they are the same RPC URL. */
export function rpcUrlKey(url: string | URL): string {
  const u = new URL(url);
  u.hash = "";
  return u.href;
}

/** Most JSON values in one request to an RPC URL (an eth_call or a log filter holds a few dozen). */
const MAX_REQUEST_VALUES = 1024;
/** Longest string `id` of a request (ethers sends numbers). */
const MAX_ID_CHARS = 128;

/** Methods that execute EVM code with the gas their transaction object names (capped). */
const CALLS = new Set(["eth_call", "eth_estimateGas"]);

/**
 * The methods an action may send: what ethers v5's JsonRpcProvider sends for its reads, its network
 * detection (eth_chainId, then net_version) and sendTransaction (eth_sendRawTransaction), which is
 * all its Contract and Wallet use; executor/sandbox/guest/ethers5-providers.js sends these.
 */
export const RPC_METHODS: ReadonlySet<string> = new Set([
  "eth_chainId",
  "net_version",
  "eth_blockNumber",
  "eth_gasPrice",
  "eth_getBalance",
  "eth_getTransactionCount",
  "eth_getCode",
  "eth_getStorageAt",
  "eth_call",
  "eth_estimateGas",
  "eth_getBlockByNumber",
  "eth_getBlockByHash",
  "eth_getTransactionByHash",
  "eth_getTransactionReceipt",
  "eth_getLogs",
  "eth_sendRawTransaction",
]);

const refusedMethod = (name: string) => ({
  refused: `the JSON-RPC method ${JSON.stringify(name.slice(0, 64))} may not be sent to the deployment's RPC URL (reads, eth_sendRawTransaction and the like only; not the node's accounts or controls)`,
});

/**
 * The request to send to a configured RPC URL: the action's JSON-RPC request written again (so the
 * node parses exactly what was checked: no duplicate "method" keys, escapes, comments or other keys
 * read otherwise by another parser), with the gas of a call capped, or why it may not be sent.
 * `guard`: the gas cap and the service's own accounts (default: those installed in this process).
 */
export function rpcRequest(
  method: string,
  body: string | undefined,
  guard: { gasCap: number; serviceAccounts: Set<string> } = currentRpcGuard(),
): { body: string } | { refused: string } {
  if (method !== "POST") return { refused: `only JSON-RPC requests (POST) may be sent to the deployment's RPC URL, not ${method}` };
  if (body === undefined || jsonTextValues(body, MAX_REQUEST_VALUES) > MAX_REQUEST_VALUES) return { refused: `a request to the deployment's RPC URL holds at most ${MAX_REQUEST_VALUES} JSON values` };
  let payload: unknown;
  try {
    payload = JSON.parse(body);
  } catch {
    return { refused: "a request to the deployment's RPC URL must be JSON-RPC (the body is not JSON)" };
  }
  if (Array.isArray(payload)) return { refused: "JSON-RPC batches are not accepted by the deployment's RPC URL: send one request per fetch (each counts against the run's fetches)" };
  if (payload === null || typeof payload !== "object") return { refused: "a request to the deployment's RPC URL must be JSON-RPC (a JSON object)" };
  const { jsonrpc, id = null, method: name, params = [] } = payload as Record<string, unknown>;
  if (typeof name !== "string") return { refused: "a request to the deployment's RPC URL must be JSON-RPC (no method)" };
  if (!RPC_METHODS.has(name)) return refusedMethod(name);
  if (jsonrpc !== undefined && jsonrpc !== "2.0") return { refused: 'a request to the deployment\'s RPC URL must be JSON-RPC 2.0 ("jsonrpc": "2.0")' };
  if (!(id === null || (typeof id === "number" && Number.isFinite(id)) || (typeof id === "string" && id.length <= MAX_ID_CHARS))) {
    return { refused: `a JSON-RPC request's id must be a number, a string of at most ${MAX_ID_CHARS} characters, or null` };
  }
  if (!Array.isArray(params)) return { refused: "a JSON-RPC request's params must be an array (positional)" };
  let sent: unknown[] = params;
  if (CALLS.has(name)) {
    const capped = cappedCall(name, params, guard.gasCap);
    if ("refused" in capped) return capped;
    sent = capped.params;
  } else if (name === "eth_sendRawTransaction") {
    const refused = params.length === 1 ? rawTransactionRefusal(params[0], guard) : "eth_sendRawTransaction takes one signed transaction";
    if (refused) return { refused };
  }
  return { body: JSON.stringify({ jsonrpc: "2.0", id, method: name, params: sent }) };
}
