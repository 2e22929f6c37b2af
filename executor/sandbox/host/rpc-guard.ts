/**
 * What an action's JSON-RPC request to a deployment RPC URL may make the node do, beyond its method
 * (./rpc-urls.ts): how much EVM code it may execute, and whose transactions it may carry.
 *
 * - Gas. A node executes eth_call, eth_estimateGas and eth_createAccessList with the gas the request
 *   names, or with the whole block gas limit when it names none; Hardhat's EDR records every step
 *   of that execution (for its Solidity stack traces): 30M gas of a 4-byte loop is ~8 s and
 *   ~3.4 GB of the local chain. So such a call always carries a `gas` of at most the cap (a larger
 *   one, or none, is written as the cap: a call that fits answers the same), and a signed
 *   transaction whose gas limit is above the cap is refused (it would run the same way once mined,
 *   and the local chain journals and replays it at every start). An estimate runs the call several
 *   times (a binary search of the gas limit): geth searches within the gas named, and so does npm
 *   start's chain, each run its own call of at most it (scripts/start/estimateGas.ts: at most 14
 *   runs at the default cap); Hardhat's own node searches up to its block gas limit, in one request.
 * - Senders. A signed transaction (eth_sendRawTransaction) from one of the service's own accounts
 *   (its API payers, the admin API payer, the contracts' owner) is refused, and so is an EIP-7702
 *   authorization signed by one (it would let any sender run code as that account): the contract
 *   trusts an API payer to act for every managed account, so whoever holds such a key must never
 *   reach the chain through an action, even if the key leaked or is a public test key.
 *
 * The relayer installs its guard when its executor starts (installRpcGuard). The guard is the
 * process's: fetch.ts checks every hop to an RPC URL through rpcRequest (including a redirect from
 * a public URL to one), which answers with the strictest installed guard: the smallest gas cap and
 * every installed relayer's accounts.
 */
import { getAddress, toQuantity, Transaction, verifyAuthorization } from "ethers";

/**
 * The default gas cap (VESTA_ACTION_RPC_GAS_CAP): contract reads (a Multicall of a hundred balances
 * is ~0.3M), the estimates of ordinary transactions (a swap ~0.3M) and the deployment of a small
 * contract fit. At worst (a loop of the cheapest opcodes that runs out of gas) one call is ~0.1-0.2 s
 * and ~60-100 MB of npm start's chain, given back after the call; an estimate of code whose success
 * depends on the gas left runs ~10M gas in 14 such calls, ~0.6-0.9 s.
 */
export const DEFAULT_RPC_GAS_CAP = 1_000_000;

export type RpcGuard = {
  /** The most gas one call may execute, and the largest gas limit of a sent transaction. */
  gasCap: number;
  /** The service's own accounts (checksummed addresses), whose transactions actions may not send. */
  serviceAccounts: () => Iterable<string>;
};

const installed = new Set<RpcGuard>();

/** Makes `guard` apply to every request to an RPC URL in this process; returns its removal. */
export function installRpcGuard(guard: RpcGuard): () => void {
  const own = { ...guard }; // installed twice = two entries, each removed by its own call
  installed.add(own);
  return () => void installed.delete(own);
}

/** The strictest of the installed guards (the default cap and no accounts when none is). */
export function currentRpcGuard(): { gasCap: number; serviceAccounts: Set<string> } {
  let gasCap = installed.size ? Infinity : DEFAULT_RPC_GAS_CAP;
  const serviceAccounts = new Set<string>();
  for (const g of installed) {
    gasCap = Math.min(gasCap, g.gasCap);
    for (const a of g.serviceAccounts()) serviceAccounts.add(getAddress(a));
  }
  return { gasCap, serviceAccounts };
}

/** Fields of the transaction object of eth_call, eth_estimateGas and eth_createAccessList (the execution-apis' GenericTransaction). */
const CALL_FIELDS = new Set([
  "type", "nonce", "to", "from", "gas", "value", "input", "data", "gasPrice", "maxPriorityFeePerGas", "maxFeePerGas",
  "maxFeePerBlobGas", "accessList", "blobVersionedHashes", "chainId", "authorizationList",
]);

function quantity(v: unknown): bigint | undefined {
  if (typeof v === "string" && /^0x[0-9a-fA-F]{1,64}$/.test(v)) return BigInt(v);
  if (typeof v === "number" && Number.isSafeInteger(v) && v >= 0) return BigInt(v);
  return undefined;
}

/**
 * The params of a call that executes code, with the transaction's `gas` at most `gasCap` (set to it
 * when absent or larger), or why they are refused.
 */
export function cappedCall(method: string, params: unknown[], gasCap: number): { params: unknown[] } | { refused: string } {
  const [tx, ...rest] = params;
  if (tx === null || typeof tx !== "object" || Array.isArray(tx)) return { refused: `${method}'s first parameter must be a transaction object` };
  // ethers v5 sends [transaction, block]; a state or block override (a third parameter) would run code the chain does not hold
  if (rest.length > 1) return { refused: `${method} takes a transaction and a block only on the deployment's RPC URL (no state or block overrides)` };
  const { gasLimit, ...fields } = tx as Record<string, unknown>; // v5's name for gas, which some nodes read too
  const unknown = Object.keys(fields).find((k) => !CALL_FIELDS.has(k));
  if (unknown !== undefined) return { refused: `${method}'s transaction has a field the deployment's RPC URL does not take: ${JSON.stringify(unknown.slice(0, 64))}` };
  const asked = fields.gas ?? gasLimit;
  const gas = asked === undefined ? BigInt(gasCap) : quantity(asked);
  if (gas === undefined) return { refused: `${method}'s gas must be a quantity (0x-prefixed hex)` };
  return { params: [{ ...fields, gas: toQuantity(gas < BigInt(gasCap) ? gas : BigInt(gasCap)) }, ...rest] };
}

/** Why a signed transaction may not be sent to an RPC URL, or undefined when it may. */
export function rawTransactionRefusal(raw: unknown, guard: { gasCap: number; serviceAccounts: Set<string> }): string | undefined {
  let tx: Transaction;
  try {
    if (typeof raw !== "string") throw new Error("not a string");
    tx = Transaction.from(raw);
  } catch {
    return "eth_sendRawTransaction takes one signed transaction (0x-prefixed hex) that decodes";
  }
  const sender = tx.from;
  if (sender === null) return "eth_sendRawTransaction takes a signed transaction";
  if (guard.serviceAccounts.has(sender)) {
    return `a transaction from ${sender} may not be sent to the deployment's RPC URL: it is one of this service's own accounts (an API payer, the admin API payer or the contracts' owner)`;
  }
  for (const auth of tx.authorizationList ?? []) {
    let signer: string;
    try {
      signer = verifyAuthorization({ address: auth.address, nonce: auth.nonce, chainId: auth.chainId }, auth.signature);
    } catch {
      continue; // an authorization that recovers to no address is skipped by the chain too
    }
    if (guard.serviceAccounts.has(signer)) {
      return `a transaction carrying an authorization (EIP-7702) signed by ${signer} may not be sent to the deployment's RPC URL: it is one of this service's own accounts`;
    }
  }
  if (tx.gasLimit > BigInt(guard.gasCap)) {
    return `a transaction's gas limit may be at most ${guard.gasCap} on the deployment's RPC URL (this one: ${tx.gasLimit}; VESTA_ACTION_RPC_GAS_CAP)`;
  }
  return undefined;
}
