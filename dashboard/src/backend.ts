/**
 * What the dashboard does to an account, in one interface with two implementations:
 * - ApiBackend: a managed account (or a usage key), through the typed client over HTTP;
 * - WalletBackend: a wallet-owned (ChainSecured) account, whose admin writes go from the wallet to
 *   the AccountConfig contract (spec 2: direct path), reads come from the contract through the
 *   wallet's provider, and mints and billing go through the typed client with EIP-712 signatures.
 */
import { BrowserProvider, keccak256, solidityPackedKeccak256, toUtf8Bytes, type Eip1193Provider, type JsonRpcSigner } from "ethers";
import { createVestaClient, unwrap, VestaApiError, type Schemas, type VestaClient } from "@client";
import { buildTypedData, type PrimaryType, type TypedData } from "../../protocol/eip712";
import { connectAccountConfig, type IAccountConfig } from "../../protocol/accountConfig";
import { hex32, toPermissionArgs, toRestUsageKey } from "../../protocol/usageKeyShape";
import { LIMITS, truncateUtf8 } from "../../protocol/limits";

export type Group = { id: number; name: string; description: string; pkpCount: number; cidCount: number };
export type WalletItem = { address: string; name: string; description: string };
export type ActionItem = { hashedCid: string; name: string; description: string };
export type Permissions = Pick<
  Schemas["UsageApiKeyItem"],
  "can_create_groups" | "can_delete_groups" | "can_create_pkps" | "manage_ipfs_ids_in_groups" | "add_pkp_to_groups" | "remove_pkp_from_groups" | "execute_in_groups"
>;
export type UsageKey = Schemas["UsageApiKeyItem"];
export type KeyInput = Permissions & { name: string; description: string; expiration: number };
/** A usage key row: its hash, and its value when this browser knows it. */
export type KeyRef = { id: string; secret?: string };

export interface Backend {
  readonly kind: "key" | "wallet";
  /** Who is signed in, for the header. */
  readonly label: string;
  /** The account's hash (0x...). */
  readonly accountHash: string;
  /** The typed client, authenticated as this account (API key or X-Wallet-Auth). */
  readonly api: VestaClient;
  /** The key that runs actions by default (the account key in key mode). */
  readonly runKey?: string;
  /** Signed in with a usage key: its own record (name, hash, permissions); the dashboard shows only what it may do. */
  readonly usageKey?: UsageKey;
  listGroups(): Promise<Group[]>;
  addGroup(name: string, description: string, pkps: string[], cidHashes: string[]): Promise<number>;
  updateGroup(id: number, name: string, description: string, pkps: string[], cidHashes: string[]): Promise<void>;
  removeGroup(id: number): Promise<void>;
  groupMembers(id: number): Promise<{ wallets: WalletItem[]; actions: ActionItem[] }>;
  listWallets(): Promise<WalletItem[]>;
  createWallet(name: string, description: string): Promise<string>;
  listActions(): Promise<ActionItem[]>;
  addAction(cid: string, name: string, description: string): Promise<string>;
  removeAction(hashedCid: string): Promise<void>;
  updateAction(hashedCid: string, name: string, description: string): Promise<void>;
  listKeys(): Promise<UsageKey[]>;
  /** Creates a usage key; answers its value (shown once). */
  addKey(input: KeyInput): Promise<string>;
  updateKey(ref: KeyRef, input: KeyInput): Promise<void>;
  removeKey(ref: KeyRef): Promise<void>;
  /** Mints a replacement with the same permissions, then revokes the old key; answers the new value (shown once). Absent: this sign-in cannot rotate. */
  rotateKey?(ref: KeyRef): Promise<string>;
}

export const PAGE = { page_number: 0, page_size: 100 };
export const cidHash = (cid: string) => keccak256(toUtf8Bytes(cid));
export const keyHash = (key: string) => keccak256(toUtf8Bytes(key));
/** A usage key's on-chain hash (keccak256 of its bytes), as the key list shows it. */
export const usageKeyId = (key: string) => keyHash(key);

/** What the signed-in key may do, per permission: the account key (or wallet, or identity) everything. */
export function can(b: Backend) {
  const k = b.usageKey;
  const any = (l: number[] | undefined) => !k || (l ?? []).length > 0;
  return {
    owner: !k,
    createGroups: !k || k.can_create_groups,
    deleteGroups: !k || k.can_delete_groups,
    createWallets: !k || k.can_create_pkps,
    editGroups: any(k && [...k.manage_ipfs_ids_in_groups, ...k.add_pkp_to_groups, ...k.remove_pkp_from_groups]),
    run: any(k?.execute_in_groups),
  };
}

/** The service's base URL: the dashboard is served by the relayer at <base>/dashboard/. */
export const serviceBase = () => new URL("..", window.location.href).href.replace(/\/+$/, "");

/** An anonymous client (account creation, chain config, CIDs). */
export const publicApi = () => createVestaClient({ baseUrl: serviceBase() });

/** The code of an action by its CID: this browser's copy, else the service's (actions are public by CID); undefined when the node stores none. */
export async function codeOfCid(cid: string): Promise<string | undefined> {
  const mine = localStorage.getItem(`vesta.code.${cid}`);
  if (mine !== null) return mine;
  const r = await publicApi().GET("/core/v1/get_action_code", { params: { query: { ipfs_id: cid } }, parseAs: "text" });
  if (r.response.status === 404) return undefined;
  return unwrap(Promise.resolve(r)) as unknown as string;
}

/** The CID of action code, as the service computes it. */
export const cidOf = (code: string) => unwrap(publicApi().POST("/core/v1/get_action_ipfs_id", { body: code }));

export class ApiBackend implements Backend {
  readonly kind = "key";
  readonly api: VestaClient;
  readonly accountHash: string;

  constructor(
    readonly runKey: string,
    readonly label: string,
    readonly usageKey?: UsageKey,
  ) {
    this.api = createVestaClient({ baseUrl: serviceBase(), apiKey: runKey });
    this.accountHash = keyHash(runKey);
  }

  /** Signs in with a key: 401 (unknown, revoked, expired) comes back as the API's message. */
  static async login(key: string): Promise<ApiBackend> {
    const trimmed = key.trim();
    if (!trimmed) throw new Error("enter an account key or a usage key");
    const client = createVestaClient({ baseUrl: serviceBase(), apiKey: trimmed });
    const exists = await unwrap(client.GET("/core/v1/account_exists"));
    if (!exists) throw new Error("this key is unknown, revoked or expired");
    // Which key: a usage key's own record names it and says what it may do.
    const me = await unwrap(client.GET("/core/v1/get_current_api_key"));
    const hash = `${me.api_key_hash.slice(0, 10)}…`; // never a piece of the secret itself
    const usage = me.usage_api_key;
    return new ApiBackend(trimmed, usage ? `usage key “${usage.name || "(unnamed)"}” ${hash}` : `key ${hash}`, usage);
  }

  async listGroups() {
    const rows = await unwrap(this.api.GET("/core/v1/list_groups", { params: { query: PAGE } }));
    return rows.map((g) => ({ id: Number(g.id), name: g.name, description: g.description, pkpCount: g.pkp_count, cidCount: g.cid_count }));
  }
  async addGroup(name: string, description: string, pkps: string[], cidHashes: string[]) {
    const r = await unwrap(this.api.POST("/core/v1/add_group", { body: { group_name: name, group_description: description, pkp_ids_permitted: pkps, cid_hashes_permitted: cidHashes } }));
    return Number(r.group_id);
  }
  async updateGroup(id: number, name: string, description: string, pkps: string[], cidHashes: string[]) {
    await unwrap(this.api.POST("/core/v1/update_group", { body: { group_id: id, name, description, pkp_ids_permitted: pkps, cid_hashes_permitted: cidHashes } }));
  }
  async removeGroup(id: number) {
    await unwrap(this.api.POST("/core/v1/remove_group", { body: { group_id: id } }));
  }
  async groupMembers(id: number) {
    const [wallets, actions] = await Promise.all([
      unwrap(this.api.GET("/core/v1/list_wallets_in_group", { params: { query: { ...PAGE, group_id: id } } })),
      unwrap(this.api.GET("/core/v1/list_actions", { params: { query: { ...PAGE, group_id: id } } })),
    ]);
    return { wallets: wallets.map(toWallet), actions: actions.map(toAction) };
  }
  async listWallets() {
    return (await unwrap(this.api.GET("/core/v1/list_wallets", { params: { query: PAGE } }))).map(toWallet);
  }
  async createWallet(name: string, description: string) {
    return (await unwrap(this.api.POST("/core/v1/create_wallet", { body: { name, description } }))).wallet_address;
  }
  async listActions() {
    return (await unwrap(this.api.GET("/core/v1/list_actions", { params: { query: PAGE } }))).map(toAction);
  }
  async addAction(cid: string, name: string, description: string) {
    return (await unwrap(this.api.POST("/core/v1/add_action", { body: { action_ipfs_cid: cid, name, description } }))).hashed_cid;
  }
  async removeAction(hashedCid: string) {
    await unwrap(this.api.POST("/core/v1/delete_action", { body: { hashed_cid: hashedCid } }));
  }
  async updateAction(hashedCid: string, name: string, description: string) {
    await unwrap(this.api.POST("/core/v1/update_action_metadata", { body: { hashed_cid: hashedCid, name, description } }));
  }
  async listKeys() {
    return unwrap(this.api.GET("/core/v1/list_api_keys", { params: { query: PAGE } }));
  }
  async addKey(input: KeyInput) {
    return (await unwrap(this.api.POST("/core/v1/add_usage_api_key", { body: input }))).usage_api_key;
  }
  // By the key's hash: the owner needs no value to edit, revoke or rotate a key.
  async updateKey(ref: KeyRef, input: KeyInput) {
    await unwrap(this.api.POST("/core/v1/update_usage_api_key_by_hash", { body: { api_key_hash: ref.id, ...input } }));
  }
  async removeKey(ref: KeyRef) {
    await unwrap(this.api.POST("/core/v1/remove_usage_api_key_by_hash", { body: { api_key_hash: ref.id } }));
  }
  async rotateKey(ref: KeyRef) {
    return (await unwrap(this.api.POST("/core/v1/rotate_usage_api_key", { body: { api_key_hash: ref.id } }))).usage_api_key;
  }
}

const toWallet = (w: Schemas["WalletItem"]): WalletItem => ({ address: w.wallet_address, name: w.name, description: w.description });
const toAction = (a: Schemas["ActionItem"]): ActionItem => ({ hashedCid: a.hashed_cid, name: a.name, description: a.description });

declare global {
  interface Window {
    ethereum?: Eip1193Provider & { request(args: { method: string; params?: unknown[] | object }): Promise<unknown> };
  }
}

/** Signs a spec 2 envelope with eth_signTypedData_v4 through the wallet. */
async function signEnvelope(signer: JsonRpcSigner, primaryType: PrimaryType, chainId: number, domainName: string): Promise<{ typed_data: TypedData; signature: string }> {
  const typed_data = buildTypedData(primaryType, { domainName, chainId, address: signer.address, issuedAt: Math.floor(Date.now() / 1000) });
  const signature = (await signer.provider.send("eth_signTypedData_v4", [signer.address.toLowerCase(), JSON.stringify(typed_data)])) as string;
  return { typed_data, signature };
}

/** The X-Wallet-Auth header value: base64 of {typed_data, signature, api_key_hash?}. */
const walletAuthValue = (s: { typed_data: TypedData; signature: string }, apiKeyHash?: string) =>
  btoa(JSON.stringify({ ...s, ...(apiKeyHash ? { api_key_hash: apiKeyHash } : {}) }));

/** What an EIP-1193 or contract error means, in a sentence. */
export function walletError(err: unknown, contract?: IAccountConfig): Error {
  const e = err as { code?: unknown; info?: { error?: { code?: number; message?: string } }; data?: string; revert?: { name: string; args: unknown[] }; shortMessage?: string; message?: string };
  if (e?.code === "ACTION_REJECTED" || e?.code === 4001 || e?.info?.error?.code === 4001) return new Error("the wallet refused the request");
  if (e?.revert) return new Error(`the contract refused: ${e.revert.name}(${e.revert.args.map(String).join(", ")})`);
  if (contract && typeof e?.data === "string" && e.data.length >= 10) {
    const parsed = contract.interface.parseError(e.data);
    if (parsed) return new Error(`the contract refused: ${parsed.name}(${parsed.args.map(String).join(", ")})`);
  }
  if (err instanceof VestaApiError || err instanceof Error) return new Error(e.shortMessage ?? e.message ?? String(err));
  return new Error(String(err));
}

export type ChainInfo = { chainId: number; contract: string; domainName: string };

export class WalletBackend implements Backend {
  readonly kind = "wallet";
  readonly api: VestaClient;
  readonly label: string;
  private signedAt = 0;
  private auth?: { typed_data: TypedData; signature: string };
  /** `api_key_hash` for signed requests: only for a converted account (not the wallet's own hash). */
  private readonly namedAccount?: string;

  private constructor(
    private readonly signer: JsonRpcSigner,
    private readonly contract: IAccountConfig,
    private readonly chain: ChainInfo,
    readonly accountHash: string,
  ) {
    this.label = `wallet ${signer.address}`;
    this.namedAccount = accountHash === solidityPackedKeccak256(["address"], [signer.address]) ? undefined : accountHash;
    this.api = createVestaClient({ baseUrl: serviceBase(), walletAuth: () => this.walletAuth() });
  }

  /**
   * Wallet login: connects the EIP-1193 provider, checks its chain, and signs a BillingAuth envelope
   * (EIP-712). `accountHash` is the wallet's own ChainSecured account unless given (a converted
   * account administered by this wallet). `create` makes the wallet's account when it has none. An
   * account proposed to this wallet (a conversion or a transfer it has not accepted yet) is accepted
   * by a transaction from the wallet, which the user confirms: nothing is ever pushed onto it.
   */
  static async connect(chain: ChainInfo, opts: { accountHash?: string; create?: { name: string; description: string } } = {}): Promise<WalletBackend> {
    if (!window.ethereum) throw new Error("no wallet found in this browser (an EIP-1193 provider, window.ethereum)");
    const provider = new BrowserProvider(window.ethereum);
    try {
      await provider.send("eth_requestAccounts", []);
      const net = await provider.getNetwork();
      if (Number(net.chainId) !== chain.chainId) {
        await provider.send("wallet_switchEthereumChain", [{ chainId: `0x${chain.chainId.toString(16)}` }]).catch(() => {
          throw new Error(`the wallet is on chain ${net.chainId}; switch it to chain ${chain.chainId} (this node's chain)`);
        });
      }
      const signer = await provider.getSigner();
      const contract = connectAccountConfig(chain.contract, signer);
      const own = solidityPackedKeccak256(["address"], [signer.address]);
      const accountHash = opts.accountHash?.trim() ? hex32(BigInt(opts.accountHash.trim())) : own;
      if (!(await contract.accountExists(accountHash))) {
        if (!opts.create || accountHash !== own) throw new Error(`${signer.address} has no wallet-owned account here yet: create one`);
        await (await contract.newChainSecuredAccount(opts.create.name, opts.create.description)).wait();
      }
      let account = await contract.getAccount(accountHash);
      if (account.adminWalletAddress !== signer.address && account.pendingAdminWalletAddress === signer.address) {
        await (await contract.acceptAccountOwnership(accountHash)).wait();
        account = await contract.getAccount(accountHash);
      }
      if (account.adminWalletAddress !== signer.address) throw new Error(`${signer.address} is not the admin wallet of account ${accountHash}`);
      if (account.managed) throw new Error(`account ${accountHash} is managed by the service: sign in with its account key`);
      const backend = new WalletBackend(signer, contract, chain, accountHash);
      await backend.walletAuth(); // the EIP-712 login signature
      return backend;
    } catch (err) {
      throw walletError(err);
    }
  }

  /** A BillingAuth signature less than 4 minutes old (the service accepts 5). */
  private async walletAuth(): Promise<string> {
    if (!this.auth || Date.now() - this.signedAt > 240_000) {
      this.auth = await signEnvelope(this.signer, "BillingAuth", this.chain.chainId, this.chain.domainName);
      this.signedAt = Date.now();
    }
    return walletAuthValue(this.auth, this.namedAccount);
  }

  private async tx<T extends { wait(): Promise<unknown> }>(send: () => Promise<T>): Promise<void> {
    try {
      await (await send()).wait();
    } catch (err) {
      throw walletError(err, this.contract);
    }
  }

  private async mint<P extends "/core/v1/create_wallet_with_signature" | "/core/v1/add_usage_api_key_with_signature">(path: P, primaryType: PrimaryType) {
    const signed = await signEnvelope(this.signer, primaryType, this.chain.chainId, this.chain.domainName).catch((err) => {
      throw walletError(err);
    });
    const body = { ...signed, ...(this.namedAccount ? { api_key_hash: this.namedAccount } : {}) };
    return unwrap(publicApi().POST(path, { body } as never)) as Promise<{
      wallet_address: string;
      derivation_path: string;
      usage_api_key?: string;
      usage_api_key_hash?: string;
    }>;
  }

  async listGroups() {
    const [items] = await this.contract.listGroups(this.accountHash, 0, 100);
    return items.map((g) => ({ id: Number(g.id), name: g.name, description: g.description, pkpCount: Number(g.pkpCount), cidCount: Number(g.cidCount) }));
  }
  async addGroup(name: string, description: string, pkps: string[], cidHashes: string[]) {
    let id = 0;
    try {
      const receipt = await (await this.contract.addGroup(this.accountHash, name, description, cidHashes, pkps)).wait();
      for (const log of receipt?.logs ?? []) {
        const parsed = this.contract.interface.parseLog(log);
        if (parsed?.name === "GroupCreated") id = Number(parsed.args.groupId);
      }
    } catch (err) {
      throw walletError(err, this.contract);
    }
    return id;
  }
  updateGroup(id: number, name: string, description: string, pkps: string[], cidHashes: string[]) {
    return this.tx(() => this.contract.updateGroup(this.accountHash, id, name, description, cidHashes, pkps));
  }
  removeGroup(id: number) {
    return this.tx(() => this.contract.removeGroup(this.accountHash, id));
  }
  async groupMembers(id: number) {
    const [[wallets], [actions]] = await Promise.all([this.contract.listWalletsInGroup(this.accountHash, id, 0, 100), this.contract.listActionsInGroup(this.accountHash, id, 0, 100)]);
    return { wallets: wallets.map(walletOf), actions: actions.map(actionOf) };
  }
  async listWallets() {
    return (await this.contract.listWallets(this.accountHash, 0, 100))[0].map(walletOf);
  }
  async createWallet(name: string, description: string) {
    const minted = await this.mint("/core/v1/create_wallet_with_signature", "CreateWallet");
    await this.tx(() => this.contract.registerWalletDerivation(this.accountHash, minted.wallet_address, minted.derivation_path, name, description));
    return minted.wallet_address;
  }
  async listActions() {
    return (await this.contract.listActions(this.accountHash, 0, 100))[0].map(actionOf);
  }
  async addAction(cid: string, name: string, description: string) {
    await this.tx(() => this.contract.addAction(this.accountHash, name, description, cidHash(cid)));
    return cidHash(cid);
  }
  removeAction(hashedCid: string) {
    return this.tx(() => this.contract.removeAction(this.accountHash, hashedCid));
  }
  updateAction(hashedCid: string, name: string, description: string) {
    return this.tx(() => this.contract.updateActionMetadata(this.accountHash, hashedCid, 0, name, description));
  }
  async listKeys(): Promise<UsageKey[]> {
    const [items] = await this.contract.listUsageApiKeys(this.accountHash, 0, 100);
    return items.map(toRestUsageKey);
  }
  async addKey(input: KeyInput) {
    // The service reserves the key for this account before its hash is public (charged to the account).
    const minted = await this.mint("/core/v1/add_usage_api_key_with_signature", "AddUsageApiKey");
    const walletName = truncateUtf8(`usage key: ${input.name}`, LIMITS.nameBytes);
    await this.tx(() => this.contract.registerWalletDerivation(this.accountHash, minted.wallet_address, minted.derivation_path, walletName, ""));
    await this.setKey(minted.usage_api_key_hash!, input);
    return minted.usage_api_key!;
  }
  updateKey(ref: KeyRef, input: KeyInput) {
    return this.setKey(ref.id, input);
  }
  removeKey(ref: KeyRef) {
    return this.tx(() => this.contract.removeUsageApiKey(this.accountHash, ref.id));
  }
  private setKey(hash: string, k: KeyInput) {
    return this.tx(() => this.contract.setUsageApiKey(this.accountHash, hash, k.expiration, 0, k.name, k.description, ...toPermissionArgs(k)));
  }
}

const walletOf = (w: { walletAddress: string; name: string; description: string }): WalletItem => ({ address: w.walletAddress, name: w.name, description: w.description });
const actionOf = (a: { cidHash: bigint; name: string; description: string }): ActionItem => ({ hashedCid: hex32(a.cidHash), name: a.name, description: a.description });
