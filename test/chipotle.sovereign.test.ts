import { expect } from "chai";
import { ethers } from "hardhat";
import { keccak256, toUtf8Bytes, verifyMessage } from "ethers";
import { SIGN_ACTION, signedRequest } from "../scripts/lib/chainSecured";
import { suiteStack } from "./helpers/relayerChecks";
import { fundedWallet } from "./helpers/wallets";
import { ChipotleSovereignClient } from "./helpers/chipotleSovereignClient";
import { call } from "./helpers/relayer";

/**
 * Issue 19, section 3: the sovereign flow of Chipotle's SDK (create account, wallet, group, usage
 * key, run an action, then manage and revoke), driven by a client shaped like it against Vesta's
 * AccountConfig address and HTTP API. The mint request is spec 2's signed envelope (Chipotle's SDK
 * sends its SIWE text form to the same route: see the README's compatibility table).
 */
describe("Chipotle's sovereign flow against Vesta", function () {
  this.timeout(180_000);
  const stack = suiteStack();

  /** A funded wallet's client, and the relayer's view of the chain brought up to date (it polls; tests do not wait). */
  async function sovereignClient() {
    const wallet = await fundedWallet();
    const chainId = stack().relayer.ctx.chain.chainId;
    const client = new ChipotleSovereignClient({
      baseUrl: stack().relayer.url,
      contractAddress: await stack().config.getAddress(),
      signer: wallet,
      provider: ethers.provider,
      mintBody: (w) => signedRequest(w, "CreateWallet", chainId),
    });
    return { wallet, client, synced: () => stack().relayer.ctx.executor.permissions.sync() };
  }

  it("creates the account, a wallet, a group, a usage key, and runs an action with that key", async function () {
    const { wallet, client, synced } = await sovereignClient();

    // 1. The account (the wallet is its admin); the SDK's login check.
    expect(await client.accountExistsByHash(client.adminHash)).to.equal(false);
    const created = await client.newChainSecuredAccount({ accountName: "sovereign", accountDescription: "created by the SDK's flow" });
    expect(created.api_key_hash).to.equal(client.adminHash);
    expect(await client.accountExistsByHash(client.adminHash)).to.equal(true);
    expect(await client.getApiPayers()).to.deep.equal(await stack().config.getApiPayers());

    // 2. A wallet (PKP): minted by the server after a signature, registered from the wallet.
    const { wallet_address: pkp } = await client.createWallet({ name: "signer", description: "signs for the bot" });
    expect(await client.listWallets()).to.deep.equal([
      { id: (await stack().config.getWallet(client.adminHash, pkp)).derivationPath.toString(), name: "signer", description: "signs for the bot", wallet_address: pkp },
    ]);

    // 3. A group listing the action and the wallet; the action's metadata.
    const cid = await client.getLitActionIpfsId(SIGN_ACTION);
    const group = await client.addGroup({ groupName: "bots", groupDescription: "what the bot may do", pkpIdsPermitted: [pkp], cidHashesPermitted: [keccak256(toUtf8Bytes(cid))] });
    expect(group.group_id).to.equal("1");
    await client.addAction({ actionIpfsCid: cid, name: "sign", description: "signs a message" });
    expect(await client.listGroups()).to.deep.equal([{ id: "1", name: "bots", description: "what the bot may do" }]);
    expect(await client.listActions({ groupId: "1" })).to.deep.equal([{ id: BigInt(keccak256(toUtf8Bytes(cid))).toString(), name: "sign", description: "signs a message" }]);
    expect((await client.listWalletsInGroup({ groupId: "1" })).map((w) => w.wallet_address)).to.deep.equal([pkp]);

    // 4. A usage key minted in the client and registered by hash from the wallet (execute in the group).
    const usage = await client.addUsageApiKey({ name: "bot", description: "runs the signer", executeInGroups: [1] });
    expect(usage.usage_api_key).to.match(/^lk_[0-9a-f]{64}$/);
    const [item] = await client.listApiKeys();
    expect(item).to.deep.equal({
      id: BigInt(usage.hash).toString(),
      api_key_hash: keccak256(toUtf8Bytes(usage.usage_api_key)),
      name: "bot",
      description: "runs the signer",
      expiration: "0",
      balance: 0,
      can_create_groups: false,
      can_delete_groups: false,
      can_create_pkps: false,
      can_manage_ipfs_ids_in_groups: [],
      can_add_pkp_to_groups: [],
      can_remove_pkp_from_groups: [],
      can_execute_in_groups: [1],
    });
    expect((await stack().config.resolveApiKey(usage.hash)).apiKeyHash, "the key acts for the wallet's account").to.equal(BigInt(client.adminHash));

    // 5. The usage key runs the action over HTTP; the wallet (PKP) signs.
    await synced();
    const run = await client.litAction({ apiKey: usage.usage_api_key, code: SIGN_ACTION, jsParams: { pkpId: pkp, message: "from a Chipotle client" } });
    expect(run.has_error, JSON.stringify(run)).to.equal(false);
    expect(verifyMessage("from a Chipotle client", run.response.signature)).to.equal(pkp);
    expect(wallet.address).not.to.equal(pkp);
  });

  it("manages what it created: update and revoke the key, edit the group and the action, remove members and the group", async function () {
    const { client, synced } = await sovereignClient();
    await client.newChainSecuredAccount({ accountName: "managed by the SDK" });
    const { wallet_address: pkp } = await client.createWallet();
    const cid = await client.getLitActionIpfsId(SIGN_ACTION);
    const hashedCid = keccak256(toUtf8Bytes(cid));
    const { group_id } = await client.addGroup({ groupName: "g", cidHashesPermitted: [hashedCid] });
    await client.addPkpToGroup({ groupId: group_id!, pkpId: pkp });
    await client.addAction({ actionIpfsCid: cid, name: "sign" });
    const { usage_api_key: key } = await client.addUsageApiKey({ name: "bot", executeInGroups: [0] });
    await synced();
    const sign = () => client.litAction({ apiKey: key, code: SIGN_ACTION, jsParams: { pkpId: pkp, message: "m" } });
    expect((await sign()).has_error).to.equal(false);

    // The whole permission set is replaced (Chipotle's upsert): no execute any more.
    await client.updateUsageApiKey({ usageApiKey: key, name: "bot", manageIpfsIdsInGroups: [0] });
    await client.updateUsageApiKeyMetadata({ usageApiKey: key, name: "renamed", description: "now a manager" });
    expect((await client.listApiKeys()).map((k) => [k.name, k.description, k.can_execute_in_groups, k.can_manage_ipfs_ids_in_groups])).to.deep.equal([["renamed", "now a manager", [], [0]]]);
    await synced();
    const refused = await call(stack(), "POST", "/lit_action", { key, body: { code: SIGN_ACTION, js_params: { pkpId: pkp, message: "m" } } });
    expect(refused.status).to.equal(403);

    await client.updateGroup({ groupId: group_id!, name: "g2", description: "renamed", cidHashesPermitted: [hashedCid], pkpIdsPermitted: [] });
    expect(await client.listWalletsInGroup({ groupId: group_id! })).to.deep.equal([]);
    await client.addPkpToGroup({ groupId: group_id!, pkpId: pkp });
    await client.removePkpFromGroup({ groupId: group_id!, pkpId: pkp });
    await client.updateActionMetadata({ hashedCid, name: "sign v2", description: "d" });
    expect(await client.listActions()).to.deep.equal([{ id: BigInt(hashedCid).toString(), name: "sign v2", description: "d" }]);
    await client.removeActionFromGroup({ groupId: group_id!, hashedCid });
    expect(await client.listActions({ groupId: group_id! })).to.deep.equal([]);
    await client.deleteAction({ hashedCid });
    await client.removeGroup({ groupId: group_id! });
    expect(await client.listGroups()).to.deep.equal([]);

    await client.removeUsageApiKey({ usageApiKey: key });
    expect(await client.listApiKeys()).to.deep.equal([]);
    await synced();
    expect((await call(stack(), "GET", "/account_exists", { key })).body, "a revoked key names no account").to.equal(false);
    expect((await call(stack(), "POST", "/lit_action", { key, body: { code: SIGN_ACTION } })).status, "and authenticates nothing").to.equal(401);
  });

  it("a write Vesta refuses reverts in the simulation the SDK runs first, so nothing is sent (a wildcard CID; another wallet's account)", async function () {
    const { client } = await sovereignClient();
    await client.newChainSecuredAccount();
    await expect(client.addGroup({ groupName: "everything", cidHashesPermitted: [ethers.ZeroHash] })).to.be.rejectedWith(/InvalidCidHash|reverted/);
    const other = await sovereignClient();
    await other.client.newChainSecuredAccount();
    const before = await ethers.provider.getBlockNumber();
    await expect(other.client.removeGroup({ groupId: 1 })).to.be.rejected;
    expect(await ethers.provider.getBlockNumber(), "no transaction was sent").to.equal(before);
    expect(await client.listGroups()).to.deep.equal([]);
  });
});
