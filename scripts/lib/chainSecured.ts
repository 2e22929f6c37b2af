/**
 * The wallet-owned (ChainSecured) flow of spec 2, end to end against a running chain and relayer:
 * the wallet creates its account on chain, has a PKP and a usage key minted by signed requests,
 * registers both itself, lists an action and the PKP in a group, and the usage key runs the action
 * over HTTP. Used by `scripts/chain-secured-demo.ts` and by the test suite (so the script cannot rot).
 */
import { JsonRpcProvider, keccak256, solidityPackedKeccak256, toUtf8Bytes, verifyMessage, Wallet, type TransactionReceipt } from "ethers";
import { buildTypedData, type PrimaryType, type TypedData } from "../../protocol/eip712";
import { keyHash } from "../../protocol/usageKeySeal";
import { computeCid } from "../../executor/cid";
import type { IAccountConfig } from "../../typechain-types";
import { connectAccountConfig } from "../../protocol/accountConfig";

/**
 * The local development chain's account 5 (Hardhat's well-known test mnemonic), funded in its
 * genesis. A TEST KEY, public to everyone: never use it on a real network. It holds no role on
 * `npm start`'s chain (the contracts' owner and API payers are keys of the data directory's own).
 */
export const LOCAL_TEST_WALLET_KEY = "0x8b3a350cf5c34c9194ca85829a2df0ec3153be0318b5e2d3348e872092edffba";

/** The action the demo runs: signs `params.message` with the PKP `params.pkpId`. */
export const SIGN_ACTION = `async function main(params) {
  const pk = await Lit.Actions.getPrivateKey({ pkpId: params.pkpId });
  const wallet = new ethers.Wallet(pk);
  return { address: wallet.address, signature: await wallet.signMessage(params.message) };
}`;

type TypedDataSigner = { signTypedData: Wallet["signTypedData"] };

/** Signs an envelope as eth_signTypedData_v4 does (ethers derives EIP712Domain from the domain). */
export function signEnvelope(signer: TypedDataSigner, td: TypedData): Promise<string> {
  const { EIP712Domain: _domain, ...types } = td.types;
  return signer.signTypedData(td.domain, types, td.message);
}

/** The last issuedAt signed per signer, purpose and chain (see signedRequest). */
const lastIssuedAt = new Map<string, number>();

/**
 * A signed-request body `{typed_data, signature}` proving `signer`'s address, issued now. Never the
 * same envelope twice: the service takes a ConvertAccount or AddUsageApiKey signature once (409
 * signature_used), and a wallet signs deterministically, so a second request of the same purpose
 * within the same second is issued a second later (well inside the service's issuedAt window).
 */
export async function signedRequest(signer: TypedDataSigner & { address: string }, primaryType: PrimaryType, chainId: bigint | number) {
  const slot = `${signer.address}/${primaryType}/${chainId}`;
  const issuedAt = Math.max(Math.floor(Date.now() / 1000), (lastIssuedAt.get(slot) ?? 0) + 1);
  lastIssuedAt.set(slot, issuedAt);
  const typed_data = buildTypedData(primaryType, { chainId, address: signer.address, issuedAt });
  return { typed_data, signature: await signEnvelope(signer, typed_data) };
}

/** POSTs (or GETs, without a body) JSON to the core API; throws with the answer on anything but 200. */
export async function apiCall<T = any>(apiUrl: string, path: string, opts: { body?: unknown; key?: string } = {}): Promise<T> {
  const headers: Record<string, string> = {};
  if (opts.body !== undefined) headers["content-type"] = "application/json";
  if (opts.key) headers["x-api-key"] = opts.key;
  let res: Response;
  try {
    res = await fetch(`${apiUrl}${path}`, {
      method: opts.body === undefined ? "GET" : "POST",
      headers,
      body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
    });
  } catch (err) {
    throw new Error(`cannot reach the API at ${apiUrl} (${(err as Error).message}): is the relayer running?`);
  }
  const text = await res.text();
  if (res.status !== 200) throw new Error(`${path} answered ${res.status}: ${text}`);
  return JSON.parse(text) as T;
}

/** setUsageApiKey's permission arguments granting only `execute` on `groups`. */
const executeOnly = (groups: bigint[]): [boolean, boolean, boolean, bigint[], bigint[], bigint[], bigint[]] => [false, false, false, [], [], [], groups];

export type DemoOptions = {
  /** The core API, e.g. http://127.0.0.1:8000/core/v1 */
  apiUrl: string;
  rpcUrl: string;
  /** The private key of the wallet that owns the account (it pays its own gas). */
  walletKey: string;
  /** Where each step is reported (default: nowhere). */
  log?: (line: string) => void;
  /** The message the action signs (default: one naming the time). */
  message?: string;
};

export type DemoResult = {
  admin: string;
  accountHash: bigint;
  /** False when the wallet's account existed already (a second run) and was reused. */
  accountCreated: boolean;
  pkp: string;
  usageApiKey: string;
  usageKeyWallet: string;
  groupId: bigint;
  cid: string;
  message: string;
  signature: string;
};

const hex = (n: bigint) => `0x${n.toString(16)}`;

/** Sends one contract write and waits for it; reports its transaction hash. */
async function mined(log: (line: string) => void, what: string, send: Promise<{ wait: () => Promise<TransactionReceipt | null> }>) {
  const receipt = await (await send).wait();
  if (!receipt || receipt.status !== 1) throw new Error(`${what} failed`);
  log(`   ${what}: tx ${receipt.hash} (block ${receipt.blockNumber})`);
  return receipt;
}

/** The id of the group created in `receipt` (its GroupCreated event). */
function createdGroupId(config: IAccountConfig, receipt: TransactionReceipt): bigint {
  for (const l of receipt.logs) {
    const parsed = config.interface.parseLog(l);
    if (parsed?.name === "GroupCreated") return parsed.args.groupId as bigint;
  }
  throw new Error("addGroup emitted no GroupCreated event");
}

/** Runs the whole wallet-owned flow and checks that the action's signature recovers to the PKP. */
export async function runChainSecuredDemo(opts: DemoOptions): Promise<DemoResult> {
  const log = opts.log ?? (() => undefined);
  const chain = await apiCall<{ chain_id: number; contract_address: string }>(opts.apiUrl, "/get_node_chain_config");
  const provider = new JsonRpcProvider(opts.rpcUrl, chain.chain_id, { staticNetwork: true, cacheTimeout: -1 });
  try {
    const wallet = new Wallet(opts.walletKey, provider);
    const config = connectAccountConfig(chain.contract_address, wallet);
    log(`1. chain ${chain.chain_id}, AccountConfig ${chain.contract_address}; wallet ${wallet.address}`);
    const balance = await provider.getBalance(wallet.address).catch((err: Error) => {
      throw new Error(`cannot reach the chain at ${opts.rpcUrl}: ${err.message}`);
    });
    if (balance === 0n) throw new Error(`wallet ${wallet.address} has no ETH on ${opts.rpcUrl} to pay its gas`);

    // The account: keccak256(abi.encodePacked(wallet)), created by the wallet itself.
    const accountHash = BigInt(solidityPackedKeccak256(["address"], [wallet.address]));
    const accountCreated = !(await config.accountExists(accountHash));
    log(`2. ChainSecured account ${hex(accountHash)}: ${accountCreated ? "created by the wallet" : "exists already, reused"}`);
    if (accountCreated) {
      await mined(log, "newChainSecuredAccount", config.newChainSecuredAccount("demo account", "created by scripts/chain-secured-demo.ts"));
    }
    const account = await config.getAccount(accountHash);
    if (account.adminWalletAddress !== wallet.address || account.managed) throw new Error(`account ${hex(accountHash)} is not this wallet's ChainSecured account`);

    // A PKP, minted by a CreateWallet signature and registered by the wallet.
    const minted = await apiCall<{ wallet_address: string; derivation_path: string }>(opts.apiUrl, "/create_wallet_with_signature", {
      body: await signedRequest(wallet, "CreateWallet", chain.chain_id),
    });
    log(`3. create_wallet_with_signature minted PKP ${minted.wallet_address} (derivation path ${minted.derivation_path})`);
    await mined(log, "registerWalletDerivation", config.registerWalletDerivation(accountHash, minted.wallet_address, minted.derivation_path, "demo pkp", "signs for the demo action"));

    // A group listing the action (by the hash of its CID) and the PKP, created directly on chain.
    const cid = await computeCid(SIGN_ACTION);
    log(`4. a group listing action ${cid} (by the keccak256 of its CID) and the PKP, created on chain`);
    const receipt = await mined(log, "addGroup", config.addGroup(accountHash, "demo signers", "the demo action and its PKP", [keccak256(toUtf8Bytes(cid))], [minted.wallet_address]));
    const groupId = createdGroupId(config, receipt);
    log(`   group id ${groupId}`);

    // A usage key, minted (and reserved for the account) by an AddUsageApiKey signature; the wallet registers its wallet, then the key.
    const usage = await apiCall<{ usage_api_key: string; usage_api_key_hash: string; wallet_address: string; derivation_path: string }>(
      opts.apiUrl,
      "/add_usage_api_key_with_signature",
      { body: await signedRequest(wallet, "AddUsageApiKey", chain.chain_id) },
    );
    if (BigInt(usage.usage_api_key_hash) !== keyHash(usage.usage_api_key)) throw new Error("usage_api_key_hash is not keccak256 of usage_api_key");
    log(`5. add_usage_api_key_with_signature minted usage key ${usage.usage_api_key_hash} (wallet ${usage.wallet_address}); registered with execute on group ${groupId}`);
    await mined(log, "registerWalletDerivation", config.registerWalletDerivation(accountHash, usage.wallet_address, usage.derivation_path, "demo usage key wallet", ""));
    // The service reserved the key for this account before its hash was public: no one who sees this transaction can take or block it.
    await mined(
      log,
      "setUsageApiKey",
      config.setUsageApiKey(accountHash, usage.usage_api_key_hash, 0n, 0n, "demo runner", `execute on group ${groupId}`, ...executeOnly([groupId])),
    );

    // The usage key runs the action over HTTP; the PKP signs.
    const message = opts.message ?? `hello from a wallet-owned account at ${new Date().toISOString()}`;
    const run = await apiCall<{ response: { address: string; signature: string }; has_error: boolean; error?: string }>(opts.apiUrl, "/lit_action", {
      key: usage.usage_api_key,
      body: { code: SIGN_ACTION, js_params: { pkpId: minted.wallet_address, message } },
    });
    if (run.has_error) throw new Error(`the action failed: ${run.error}`);
    const signer = verifyMessage(message, run.response.signature);
    if (signer !== minted.wallet_address) throw new Error(`the signature recovers to ${signer}, not the PKP ${minted.wallet_address}`);
    log(`6. lit_action with the usage key: the PKP signed "${message}"`);
    log(`   signature ${run.response.signature} recovers to ${signer} (the PKP) ✓`);

    return {
      admin: wallet.address,
      accountHash,
      accountCreated,
      pkp: minted.wallet_address,
      usageApiKey: usage.usage_api_key,
      usageKeyWallet: usage.wallet_address,
      groupId,
      cid,
      message,
      signature: run.response.signature,
    };
  } finally {
    provider.destroy();
  }
}
