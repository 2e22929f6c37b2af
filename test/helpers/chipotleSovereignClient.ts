/**
 * A test client shaped like the sovereign mode of Chipotle's JavaScript SDK
 * (`LitNodeSimpleApiClient` in `lit-static/core_sdk.js`): the same method names, arguments and
 * answers, calling AccountConfig directly with Chipotle's ABI fragments (./chipotleAbi.ts) from the
 * connected wallet (every write simulated first, then sent and awaited), and the HTTP API for what
 * the SDK asks of the server (minting a wallet, running an action). Written for these tests from the
 * SDK's public behaviour; none of its code is copied.
 */
import { Contract, keccak256, randomBytes, hexlify, solidityPackedKeccak256, toUtf8Bytes, type Provider, type Wallet } from "ethers";
import { CHIPOTLE_ABI, CHIPOTLE_VIEW_ABI } from "./chipotleAbi";

type Json = Record<string, any>;
/** The body of a signed mint request (`create_wallet_with_signature`) for the wallet. */
export type MintBody = (wallet: Wallet) => Promise<unknown>;

export class ChipotleSovereignClient {
  private readonly write: Contract;
  private readonly read: Contract;
  /** The account's hash, as the SDK sets it at a wallet login: keccak256(abi.encodePacked(wallet)). */
  readonly adminHash: string;

  constructor(
    private readonly opts: { baseUrl: string; contractAddress: string; signer: Wallet; provider: Provider; mintBody: MintBody },
  ) {
    this.write = new Contract(opts.contractAddress, CHIPOTLE_ABI, opts.signer);
    this.read = new Contract(opts.contractAddress, CHIPOTLE_VIEW_ABI, opts.provider);
    this.adminHash = solidityPackedKeccak256(["address"], [opts.signer.address]);
  }

  /** As the SDK's write path: simulate (its answer is the return value), send, wait for one confirmation. */
  private async send(method: string, args: unknown[]): Promise<{ txHash: string; simulated: unknown }> {
    const fn = this.write.getFunction(method);
    const simulated = await fn.staticCall(...args);
    const tx = await fn(...args);
    const receipt = await tx.wait(1);
    if (!receipt || receipt.status !== 1) throw new Error(`${method} failed on chain`);
    return { txHash: receipt.hash, simulated };
  }

  private async http(path: string, init: { body?: unknown; apiKey?: string } = {}): Promise<any> {
    const headers: Record<string, string> = {};
    if (init.body !== undefined) headers["content-type"] = "application/json";
    if (init.apiKey) headers["x-api-key"] = init.apiKey;
    const res = await fetch(`${this.opts.baseUrl}/core/v1${path}`, { method: init.body === undefined ? "GET" : "POST", headers, body: init.body === undefined ? undefined : JSON.stringify(init.body) });
    const body = await res.json();
    if (!res.ok) throw Object.assign(new Error(`${path}: ${res.status} ${JSON.stringify(body)}`), { status: res.status, body });
    return body;
  }

  async newChainSecuredAccount({ accountName = "", accountDescription = "" } = {}) {
    const { txHash } = await this.send("newChainSecuredAccount", [accountName, accountDescription]);
    return { wallet_address: this.opts.signer.address, api_key_hash: this.adminHash, transaction_hash: txHash };
  }

  /** accountExistsAndIsMutable, asked from the connected wallet's address (the SDK's sovereign account_exists). */
  accountExistsByHash(apiKeyHashHex: string): Promise<boolean> {
    return this.read.accountExistsAndIsMutable.staticCall(apiKeyHashHex, { from: this.opts.signer.address });
  }

  getApiPayers(): Promise<string[]> {
    return this.read.api_payers();
  }

  /** Mint through the server (a signed request), then register the derivation from the wallet. */
  async createWallet({ name = "Wallet", description = "Wallet" } = {}) {
    const minted = await this.http("/create_wallet_with_signature", { body: await this.opts.mintBody(this.opts.signer) });
    const { txHash } = await this.send("registerWalletDerivation", [this.adminHash, minted.wallet_address, minted.derivation_path, name, description]);
    return { wallet_address: minted.wallet_address as string, transaction_hash: txHash };
  }

  async addGroup({ groupName = "", groupDescription = "", pkpIdsPermitted = [] as string[], cidHashesPermitted = [] as string[] }) {
    const { txHash, simulated } = await this.send("addGroup", [this.adminHash, groupName, groupDescription, cidHashesPermitted, pkpIdsPermitted]);
    return { success: true, group_id: simulated != null ? String(simulated) : null, transaction_hash: txHash };
  }

  async updateGroup({ groupId, name = "", description = "", pkpIdsPermitted = [] as string[], cidHashesPermitted = [] as string[] }: { groupId: string | number } & Json) {
    const { txHash } = await this.send("updateGroup", [this.adminHash, BigInt(groupId), name, description, cidHashesPermitted, pkpIdsPermitted]);
    return { success: true, transaction_hash: txHash };
  }

  async removeGroup({ groupId }: { groupId: string | number }) {
    const { txHash } = await this.send("removeGroup", [this.adminHash, BigInt(groupId)]);
    return { success: true, transaction_hash: txHash };
  }

  async addAction({ actionIpfsCid, name = "", description = "" }: { actionIpfsCid: string; name?: string; description?: string }) {
    const actionHash = keccak256(toUtf8Bytes(actionIpfsCid));
    const { txHash } = await this.send("addAction", [this.adminHash, name, description, actionHash]);
    return { success: true, action_hash: actionHash, transaction_hash: txHash };
  }

  async addActionToGroup({ groupId, actionIpfsCid }: { groupId: string | number; actionIpfsCid: string }) {
    const { txHash } = await this.send("addActionToGroup", [this.adminHash, BigInt(groupId), keccak256(toUtf8Bytes(actionIpfsCid))]);
    return { success: true, transaction_hash: txHash };
  }

  async removeActionFromGroup({ groupId, hashedCid }: { groupId: string | number; hashedCid: string }) {
    const { txHash } = await this.send("removeActionFromGroup", [this.adminHash, BigInt(groupId), hashedCid]);
    return { success: true, transaction_hash: txHash };
  }

  async updateActionMetadata({ hashedCid, name = "", description = "", groupId = 0 }: { hashedCid: string; name?: string; description?: string; groupId?: number }) {
    const { txHash } = await this.send("updateActionMetadata", [this.adminHash, hashedCid, BigInt(groupId), name, description]);
    return { success: true, transaction_hash: txHash };
  }

  async deleteAction({ hashedCid }: { hashedCid: string }) {
    const { txHash } = await this.send("removeAction", [this.adminHash, hashedCid]);
    return { success: true, transaction_hash: txHash };
  }

  async addPkpToGroup({ groupId, pkpId }: { groupId: string | number; pkpId: string }) {
    const { txHash } = await this.send("addPkpToGroup", [this.adminHash, BigInt(groupId), pkpId]);
    return { success: true, transaction_hash: txHash };
  }

  async removePkpFromGroup({ groupId, pkpId }: { groupId: string | number; pkpId: string }) {
    const { txHash } = await this.send("removePkpFromGroup", [this.adminHash, BigInt(groupId), pkpId]);
    return { success: true, transaction_hash: txHash };
  }

  private usageKeyArgs(hash: string, k: Json) {
    const ids = (l: unknown) => ((l as (number | string)[] | undefined) ?? []).map((n) => BigInt(n));
    return [
      this.adminHash,
      hash,
      BigInt(k.expiration ?? 0),
      BigInt(k.balance ?? 0),
      k.name ?? "",
      k.description ?? "",
      Boolean(k.canCreateGroups),
      Boolean(k.canDeleteGroups),
      Boolean(k.canCreatePkps),
      ids(k.manageIpfsIdsInGroups),
      ids(k.addPkpToGroups),
      ids(k.removePkpFromGroups),
      ids(k.executeInGroups),
    ];
  }

  /** Sovereign mode mints the usage key in the client ("lk_" + 32 random bytes in hex) and registers keccak256 of it. */
  async addUsageApiKey(k: Json = {}) {
    const usageKey = `lk_${hexlify(randomBytes(32)).slice(2)}`;
    const hash = keccak256(toUtf8Bytes(usageKey));
    const { txHash } = await this.send("setUsageApiKey", this.usageKeyArgs(hash, k));
    return { success: true, usage_api_key: usageKey, hash, transaction_hash: txHash };
  }

  async updateUsageApiKey(k: Json & { usageApiKey: string }) {
    const { txHash } = await this.send("setUsageApiKey", this.usageKeyArgs(keccak256(toUtf8Bytes(k.usageApiKey)), k));
    return { success: true, transaction_hash: txHash };
  }

  async updateUsageApiKeyMetadata({ usageApiKey, name = "", description = "" }: { usageApiKey: string; name?: string; description?: string }) {
    const { txHash } = await this.send("updateUsageApiKeyMetadata", [this.adminHash, keccak256(toUtf8Bytes(usageApiKey)), name, description]);
    return { success: true, transaction_hash: txHash };
  }

  async removeUsageApiKey({ usageApiKey }: { usageApiKey: string }) {
    const { txHash } = await this.send("removeUsageApiKey", [this.adminHash, keccak256(toUtf8Bytes(usageApiKey))]);
    return { success: true, transaction_hash: txHash };
  }

  /** The SDK's ApiKeyItem, read from the contract. */
  async listApiKeys({ pageNumber = "0", pageSize = "10" } = {}) {
    const rows: any[] = await this.read.listApiKeys(this.adminHash, pageNumber, pageSize);
    const ids = (l: bigint[]) => l.map((n) => Number(n));
    return rows.map((r) => ({
      id: r.metadata.id.toString(),
      api_key_hash: "0x" + r.apiKeyHash.toString(16).padStart(64, "0"),
      name: r.metadata.name,
      description: r.metadata.description,
      expiration: r.expiration.toString(),
      balance: Number(r.balance),
      can_create_groups: r.createGroups,
      can_delete_groups: r.deleteGroups,
      can_create_pkps: r.createPKPs,
      can_manage_ipfs_ids_in_groups: ids(r.manageIPFSIdsInGroups),
      can_add_pkp_to_groups: ids(r.addPkpToGroups),
      can_remove_pkp_from_groups: ids(r.removePkpFromGroups),
      can_execute_in_groups: ids(r.executeInGroups),
    }));
  }

  async listGroups({ pageNumber = "0", pageSize = "10" } = {}) {
    const rows: any[] = await this.read.listGroups(this.adminHash, pageNumber, pageSize);
    return rows.map((r) => ({ id: r.id.toString(), name: r.name, description: r.description }));
  }

  async listWallets({ pageNumber = "0", pageSize = "10" } = {}) {
    const rows: any[] = await this.read.listPkps(this.adminHash, pageNumber, pageSize);
    return rows.map((r) => ({ id: r.id.toString(), name: r.name, description: r.description, wallet_address: r.pkpId }));
  }

  async listWalletsInGroup({ groupId, pageNumber = "0", pageSize = "10" }: { groupId: string; pageNumber?: string; pageSize?: string }) {
    const rows: any[] = await this.read.listWalletsInGroup(this.adminHash, groupId, pageNumber, pageSize);
    return rows.map((r) => ({ id: r.id.toString(), name: r.name, description: r.description, wallet_address: r.pkpId }));
  }

  async listActions({ groupId, pageNumber = "0", pageSize = "10" }: { groupId?: string; pageNumber?: string; pageSize?: string } = {}) {
    const inGroup = groupId !== undefined && Number(groupId) > 0;
    const rows: any[] = inGroup ? await this.read.listActionsInGroup(this.adminHash, groupId, pageNumber, pageSize) : await this.read.listActions(this.adminHash, pageNumber, pageSize);
    return rows.map((r) => ({ id: r.id.toString(), name: r.name, description: r.description }));
  }

  /** POST /core/v1/get_lit_action_ipfs_id: the body is the code as a JSON string. */
  getLitActionIpfsId(code: string): Promise<string> {
    return this.http("/get_lit_action_ipfs_id", { body: code });
  }

  /** POST /core/v1/lit_action with a usage key. */
  litAction({ apiKey, code, jsParams }: { apiKey: string; code: string; jsParams?: unknown }) {
    return this.http("/lit_action", { apiKey, body: { code, js_params: jsParams ?? null } });
  }
}
