/**
 * A test client that speaks to Vesta exactly as Chipotle's JavaScript SDK (lit-static/core_sdk.js,
 * `LitNodeSimpleApiClient` in API mode) does, written here from its public request and response
 * models: the same paths and methods, the key in `X-Api-Key`, the same bodies (group ids sent as the
 * SDK sends them: a number for most routes, a string for remove_group and the list queries, page
 * numbers as strings), the signed-text form for signed requests, and the SDK's error handling (the
 * thrown message is `<route>: <body.error>`, else `body.message`). Every answer is recorded, so a
 * test can check headers and documented error codes across the whole conversation.
 */
import { keccak256, toUtf8Bytes, type Signer } from "ethers";
import { buildSiweMessage } from "../../protocol/siwe";

export type Recorded = { method: string; path: string; status: number; headers: Headers; body: unknown };

/** The message Chipotle's SDK puts in its Error for a failed call: body.error, else body.message, else a bare string body. */
function sdkMessage(text: string): string | null {
  try {
    const body = JSON.parse(text);
    if (body && typeof body.error === "string" && body.error) return body.error;
    if (body && typeof body.message === "string" && body.message) return body.message;
    if (Array.isArray(body) && body.length === 1 && typeof body[0] === "string") return body[0];
    return typeof body === "string" ? body : null;
  } catch {
    return null;
  }
}

type KeyOptions = { apiKey: string; name?: string; description?: string; executeInGroups?: number[]; canCreateGroups?: boolean };

/** The body the SDK sends for a usage key: every permission field, defaults false and [] (name and description dropped when undefined). */
const keyBody = (o: KeyOptions) => ({
  name: o.name,
  description: o.description,
  can_create_groups: o.canCreateGroups ?? false,
  can_delete_groups: false,
  can_create_pkps: false,
  manage_ipfs_ids_in_groups: [] as number[],
  add_pkp_to_groups: [] as number[],
  remove_pkp_from_groups: [] as number[],
  execute_in_groups: o.executeInGroups ?? [],
});

export class ChipotleApiClient {
  readonly api: string;
  readonly seen: Recorded[] = [];
  /** Extra headers on every request (e.g. X-Correlation-Id). */
  headers: Record<string, string> = {};

  constructor(
    baseUrl: string,
    private readonly opts: { host?: string; chainId?: number } = {},
  ) {
    this.api = `${baseUrl.replace(/\/$/, "")}/core/v1`;
  }

  /** One call; the SDK's parseResponse: JSON on 2xx, else an Error `<context>: <message>`. */
  private async send<T = any>(context: string, path: string, init: { method?: string; apiKey?: string; body?: unknown } = {}): Promise<T> {
    const headers: Record<string, string> = { ...this.headers };
    if (init.apiKey !== undefined) headers["X-Api-Key"] = init.apiKey;
    if (init.body !== undefined) headers["Content-Type"] = "application/json";
    const res = await fetch(`${this.api}${path}`, { method: init.method ?? (init.body === undefined ? "GET" : "POST"), headers, body: init.body === undefined ? undefined : JSON.stringify(init.body) });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      /* kept as text */
    }
    this.seen.push({ method: init.method ?? (init.body === undefined ? "GET" : "POST"), path: path.split("?")[0], status: res.status, headers: res.headers, body: parsed });
    if (!res.ok) {
      const message = sdkMessage(text);
      throw Object.assign(new Error(message ? `${context}: ${message}` : `${context}: ${res.status} ${res.statusText}`), { status: res.status, body: parsed });
    }
    if (typeof parsed === "string" && text && !text.startsWith('"')) throw new Error(`${context}: invalid JSON response`);
    return parsed as T;
  }

  private static page(pageNumber: string | number = "0", pageSize: string | number = "10") {
    return { page_number: String(pageNumber), page_size: String(pageSize) };
  }

  // Accounts
  newAccount(o: { accountName: string; accountDescription?: string; email?: string }) {
    return this.send("new_account", "/new_account", { body: { account_name: o.accountName, account_description: o.accountDescription ?? "", ...(o.email ? { email: o.email } : {}) } });
  }
  accountExists(apiKey: string) {
    return this.send<boolean>("account_exists", "/account_exists", { apiKey });
  }
  /** The SDK's convertToChainSecuredAccount: the new admin personal_signs the SIWE-style text. */
  async convertToChainSecuredAccount(o: { apiKey: string; signer: Signer; chainId: number; issuedAt?: number }) {
    const address = await o.signer.getAddress();
    const message = buildSiweMessage("ConvertAccount", { host: this.opts.host ?? "lit", address, chainId: o.chainId, issuedAt: o.issuedAt ?? Math.floor(Date.now() / 1000) });
    const signature = await o.signer.signMessage(message);
    await this.send("convert_to_chain_secured_account", "/convert_to_chain_secured_account", { apiKey: o.apiKey, body: { new_admin_wallet_address: address, message, signature } });
    return { wallet_address: address, api_key_hash: keccak256(toUtf8Bytes(o.apiKey)) };
  }

  // Wallets
  createWallet(apiKey: string) {
    return this.send("create_wallet", "/create_wallet", { apiKey });
  }
  /** The HTTP half of the SDK's sovereign createWallet: the signed-text mint. */
  async createWalletWithSignature(o: { signer: Signer; chainId: number }) {
    const address = await o.signer.getAddress();
    const message = buildSiweMessage("CreateWallet", { host: this.opts.host ?? "lit", address, chainId: o.chainId, issuedAt: Math.floor(Date.now() / 1000) });
    return this.send("create_wallet_with_signature", "/create_wallet_with_signature", { body: { message, signature: await o.signer.signMessage(message) } });
  }
  listWallets(o: { apiKey: string; pageNumber?: string; pageSize?: string }) {
    return this.send("list_wallets", `/list_wallets?${new URLSearchParams(ChipotleApiClient.page(o.pageNumber, o.pageSize))}`, { apiKey: o.apiKey });
  }
  listWalletsInGroup(o: { apiKey: string; groupId: string; pageNumber?: string; pageSize?: string }) {
    const q = new URLSearchParams({ group_id: o.groupId, ...ChipotleApiClient.page(o.pageNumber, o.pageSize) });
    return this.send("list_wallets_in_group", `/list_wallets_in_group?${q}`, { apiKey: o.apiKey });
  }

  // Actions
  getLitActionIpfsId(code: string) {
    return this.send<string>("get_lit_action_ipfs_id", "/get_lit_action_ipfs_id", { body: code });
  }
  litAction(o: { apiKey: string; code: string; jsParams?: unknown }) {
    return this.send("lit_action", "/lit_action", { apiKey: o.apiKey, body: { code: o.code, js_params: o.jsParams ?? null } });
  }
  addAction(o: { apiKey: string; actionIpfsCid: string; name?: string; description?: string }) {
    return this.send("add_action", "/add_action", { apiKey: o.apiKey, body: { action_ipfs_cid: o.actionIpfsCid, name: o.name ?? "", description: o.description ?? "" } });
  }
  deleteAction(o: { apiKey: string; hashedCid: string }) {
    return this.send("delete_action", "/delete_action", { apiKey: o.apiKey, body: { hashed_cid: o.hashedCid } });
  }
  updateActionMetadata(o: { apiKey: string; hashedCid: string; name?: string; description?: string }) {
    return this.send("update_action_metadata", "/update_action_metadata", { apiKey: o.apiKey, body: { hashed_cid: o.hashedCid, name: o.name ?? "", description: o.description ?? "" } });
  }
  listActions(o: { apiKey: string; groupId?: string; pageNumber?: string; pageSize?: string }) {
    const q = new URLSearchParams({ ...ChipotleApiClient.page(o.pageNumber, o.pageSize), ...(o.groupId === undefined ? {} : { group_id: o.groupId }) });
    return this.send("list_actions", `/list_actions?${q}`, { apiKey: o.apiKey });
  }

  // Groups
  addGroup(o: { apiKey: string; groupName: string; groupDescription?: string; pkpIdsPermitted?: string[]; cidHashesPermitted?: string[] }) {
    const body = { group_name: o.groupName, group_description: o.groupDescription ?? "", pkp_ids_permitted: o.pkpIdsPermitted ?? [], cid_hashes_permitted: o.cidHashesPermitted ?? [] };
    return this.send("add_group", "/add_group", { apiKey: o.apiKey, body });
  }
  updateGroup(o: { apiKey: string; groupId: string; name?: string; description?: string; pkpIdsPermitted?: string[]; cidHashesPermitted?: string[] }) {
    const body = { group_id: Number(o.groupId), name: o.name ?? "", description: o.description ?? "", pkp_ids_permitted: o.pkpIdsPermitted ?? [], cid_hashes_permitted: o.cidHashesPermitted ?? [] };
    return this.send("update_group", "/update_group", { apiKey: o.apiKey, body });
  }
  removeGroup(o: { apiKey: string; groupId: string }) {
    return this.send("remove_group", "/remove_group", { apiKey: o.apiKey, body: { group_id: String(o.groupId) } });
  }
  addActionToGroup(o: { apiKey: string; groupId: string; actionIpfsCid: string }) {
    return this.send("add_action_to_group", "/add_action_to_group", { apiKey: o.apiKey, body: { group_id: Number(o.groupId), action_ipfs_cid: o.actionIpfsCid } });
  }
  removeActionFromGroup(o: { apiKey: string; groupId: string; hashedCid: string }) {
    return this.send("remove_action_from_group", "/remove_action_from_group", { apiKey: o.apiKey, body: { group_id: Number(o.groupId), hashed_cid: o.hashedCid } });
  }
  addPkpToGroup(o: { apiKey: string; groupId: string; pkpId: string }) {
    return this.send("add_pkp_to_group", "/add_pkp_to_group", { apiKey: o.apiKey, body: { group_id: Number(o.groupId), pkp_id: o.pkpId } });
  }
  removePkpFromGroup(o: { apiKey: string; groupId: string; pkpId: string }) {
    return this.send("remove_pkp_from_group", "/remove_pkp_from_group", { apiKey: o.apiKey, body: { group_id: Number(o.groupId), pkp_id: o.pkpId } });
  }
  listGroups(o: { apiKey: string; pageNumber?: string; pageSize?: string }) {
    return this.send("list_groups", `/list_groups?${new URLSearchParams(ChipotleApiClient.page(o.pageNumber, o.pageSize))}`, { apiKey: o.apiKey });
  }

  // Usage keys
  addUsageApiKey(o: KeyOptions) {
    return this.send("add_usage_api_key", "/add_usage_api_key", { apiKey: o.apiKey, body: keyBody(o) });
  }
  updateUsageApiKey(o: KeyOptions & { usageApiKey: string }) {
    return this.send("update_usage_api_key", "/update_usage_api_key", { apiKey: o.apiKey, body: { usage_api_key: o.usageApiKey, ...keyBody(o) } });
  }
  updateUsageApiKeyMetadata(o: { apiKey: string; usageApiKey: string; name?: string; description?: string }) {
    return this.send("update_usage_api_key_metadata", "/update_usage_api_key_metadata", { apiKey: o.apiKey, body: { usage_api_key: o.usageApiKey, name: o.name ?? "", description: o.description ?? "" } });
  }
  removeUsageApiKey(o: { apiKey: string; usageApiKey: string }) {
    return this.send("remove_usage_api_key", "/remove_usage_api_key", { apiKey: o.apiKey, body: { usage_api_key: o.usageApiKey } });
  }
  listApiKeys(o: { apiKey: string; pageNumber?: string; pageSize?: string }) {
    return this.send("list_api_keys", `/list_api_keys?${new URLSearchParams(ChipotleApiClient.page(o.pageNumber, o.pageSize))}`, { apiKey: o.apiKey });
  }

  // Configuration
  getNodeChainConfig() {
    return this.send("get_node_chain_config", "/get_node_chain_config");
  }
  getApiPayers() {
    return this.send<string[]>("get_api_payers", "/get_api_payers");
  }
  getAdminApiPayer() {
    return this.send<string>("get_admin_api_payer", "/get_admin_api_payer");
  }
  getVersion() {
    return this.send("version", "/version");
  }
  getLitActionClientConfig() {
    return this.send("get_lit_action_client_config", "/get_lit_action_client_config");
  }
  getChainConfigKeys() {
    return this.send("get_chain_config_keys", "/get_chain_config_keys");
  }

  // Billing
  getStripeConfig() {
    return this.send("billing/stripe_config", "/billing/stripe_config");
  }
  getBillingBalance(apiKey: string) {
    return this.send("billing/balance", "/billing/balance", { apiKey });
  }
  createPaymentIntent(apiKey: string, amountCents: number) {
    return this.send("billing/create_payment_intent", "/billing/create_payment_intent", { apiKey, body: { amount_cents: amountCents } });
  }
  confirmPayment(apiKey: string, paymentIntentId: string) {
    return this.send("billing/confirm_payment", "/billing/confirm_payment", { apiKey, body: { payment_intent_id: paymentIntentId } });
  }
}
