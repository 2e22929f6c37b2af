import crypto from "node:crypto";
import { ethers } from "hardhat";
import { Wallet } from "ethers";
import { buildTypedData } from "../protocol/eip712";
import { signEnvelope } from "../scripts/lib/chainSecured";
import { gasCents } from "../billing/pricing";
import { hashKey } from "../relayer/http/auth";
import { hex32 } from "../protocol/usageKeyShape";
import { call, startStack } from "../test/helpers/relayer";

const TOKEN_CENTS = 300_000; // $3000 per native token
const MARGIN = 20;
const WRITE_CENTS = 1;
const BASE_FEE = 10n ** 9n; // 1 gwei
/** The longest strings the edge takes today: 256 and 1024 UTF-16 units of a 3-byte character. */
const NAME = "€".repeat(256);
const DESC = "€".repeat(1024);
const hash = () => `0x${crypto.randomBytes(32).toString("hex")}`;

type Row = { what: string; gas: bigint; gasLimit: bigint; price: bigint; charged: number; reserved: number };

/**
 * The worst case of each class of relayed write with the current contract and edge limits (longest
 * strings, longest lists): the gas the payer spent, and what the account was charged for it (its
 * fixed price plus gas used x effective gas price at $3000 a token and a 20% margin), with the
 * worst case reserved at admission (gas limit x max fee). Each write goes into its own block at a
 * ~1 gwei base fee. The price scales linearly with the gas price and the token price. new_account is unauthenticated: the service pays it (bounded per client address).
 */
export async function printWriteCostBench() {
  console.log("== Relayed writes: worst-case payer gas per request class, and what the account is charged");
  const stack = await startStack({
    payerCount: 1,
    env: { VESTA_GAS_TOKEN_PRICE_CENTS: String(TOKEN_CENTS), VESTA_GAS_MARGIN_PERCENT: String(MARGIN), VESTA_PRICE_PER_WRITE_CENTS: String(WRITE_CENTS), VESTA_NEW_ACCOUNT_RATE_LIMIT: "1000000" },
  });
  const rows: Row[] = [];
  try {
    const post = async (key: string | undefined, path: string, body: unknown) => {
      const r = await call(stack, "POST", path, { key, body });
      if (r.status !== 200) throw new Error(`${path}: ${r.status} ${JSON.stringify(r.body)}`);
      return r.body;
    };
    // Read from billing itself: after the conversion the account key reads no balance.
    const balance = (key: string) => stack.relayer.ctx.billing!.balance({ key: `account:${hex32(hashKey(key))}`, account: hex32(hashKey(key)) });
    const measure = async (what: string, key: string | undefined, path: string, body: unknown) => {
      await ethers.provider.send("hardhat_setNextBlockBaseFeePerGas", [ethers.toQuantity(BASE_FEE)]);
      await ethers.provider.send("evm_mine", []);
      const before = key ? await balance(key) : 0;
      const answer = await post(key, path, body);
      const block = await ethers.provider.getBlock("latest", true);
      const tx = block!.prefetchedTransactions[0];
      const receipt = (await ethers.provider.getTransactionReceipt(tx.hash))!;
      const worst = tx.gasLimit * (tx.maxFeePerGas ?? tx.gasPrice);
      rows.push({ what, gas: receipt.gasUsed, gasLimit: tx.gasLimit, price: receipt.gasPrice, charged: key ? before - (await balance(key)) : 0, reserved: path === "/new_account" ? 0 : WRITE_CENTS + gasCents(worst, { tokenPriceCents: TOKEN_CENTS, marginPercent: MARGIN }) });
      return answer;
    };

    const { api_key: owner } = await measure("new_account (longest name, description)", undefined, "/new_account", { account_name: NAME, account_description: DESC });
    const { wallet_address: first } = await measure("create_wallet (longest name, description)", owner, "/create_wallet", { name: NAME, description: DESC });
    const wallets = [first];
    for (let i = 1; i < 100; i++) wallets.push((await post(owner, "/create_wallet", {})).wallet_address);
    const groups: number[] = [];
    for (let i = 0; i < 100; i++) groups.push((await post(owner, "/add_group", { group_name: `g${i}` })).group_id);
    const { group_id } = await measure("add_group (longest strings, 100 wallets, 100 CIDs)", owner, "/add_group", {
      group_name: NAME, group_description: DESC, pkp_ids_permitted: wallets, cid_hashes_permitted: Array.from({ length: 100 }, hash),
    });
    await measure("update_group (longest strings, 100 wallets, 100 new CIDs)", owner, "/update_group", {
      group_id, name: NAME, description: DESC, pkp_ids_permitted: wallets, cid_hashes_permitted: Array.from({ length: 100 }, hash),
    });
    const cid = "QmPZ9gcCEpqKTo6aq61g2nXGUhM4iCL3ewB6LDXZCtioEB";
    const { hashed_cid } = await measure("add_action (longest name, description)", owner, "/add_action", { action_ipfs_cid: cid, name: NAME, description: DESC });
    await measure("update_action_metadata (longest)", owner, "/update_action_metadata", { hashed_cid, name: NAME, description: DESC });
    await measure("add_action_to_group", owner, "/add_action_to_group", { group_id: groups[0], action_ipfs_cid: cid });
    await measure("add_pkp_to_group", owner, "/add_pkp_to_group", { group_id: groups[0], pkp_id: first });
    const permissions = { can_create_groups: true, can_delete_groups: true, can_create_pkps: true, manage_ipfs_ids_in_groups: groups, add_pkp_to_groups: groups, remove_pkp_from_groups: groups, execute_in_groups: groups };
    const { usage_api_key } = await measure("add_usage_api_key (longest strings, 4 lists of 100 groups)", owner, "/add_usage_api_key", { name: NAME, description: DESC, ...permissions });
    await measure("update_usage_api_key (4 lists of 100 groups again)", owner, "/update_usage_api_key", { usage_api_key, ...permissions });
    await measure("remove_usage_api_key", owner, "/remove_usage_api_key", { usage_api_key });
    await measure("remove_group (100 wallets, 100 CIDs)", owner, "/remove_group", { group_id });
    const wallet = Wallet.createRandom();
    const td = buildTypedData("ConvertAccount", { chainId: stack.relayer.ctx.chain.chainId, address: wallet.address, issuedAt: Math.floor(Date.now() / 1000) });
    await measure("convert_to_chain_secured_account", owner, "/convert_to_chain_secured_account", { new_admin_wallet_address: wallet.address, typed_data: td, signature: await signEnvelope(wallet, td) });
    print(rows);
  } finally {
    await stack.stop();
  }
}

function print(rows: Row[]) {
  const w = Math.max(...rows.map((r) => r.what.length));
  const gwei = (wei: bigint) => (Number(wei) / 1e9).toFixed(3);
  console.log(`effective gas price ${gwei(rows[1].price)} gwei (base fee ~1 gwei + tip), $${TOKEN_CENTS / 100} per token, ${MARGIN}% margin, ${WRITE_CENTS} cent per write:`);
  console.log(`${"request".padEnd(w)}  ${"payer gas".padStart(10)}  ${"gas limit".padStart(10)}  ${"charged".padStart(9)}  ${"reserved".padStart(9)}`);
  const usd = (cents: number) => `$${(cents / 100).toFixed(2)}`;
  for (const r of rows) {
    const charged = r.what.startsWith("new_account") ? "free" : usd(r.charged);
    console.log(`${r.what.padEnd(w)}  ${r.gas.toString().padStart(10)}  ${r.gasLimit.toString().padStart(10)}  ${charged.padStart(9)}  ${(r.reserved ? usd(r.reserved) : "-").padStart(9)}`);
  }
  const worst = rows.reduce((a, b) => (b.gas > a.gas ? b : a));
  console.log(`  worst: ${worst.what}, ${worst.gas} gas; new_account (the one write the service pays) ${rows[0].gas} gas`);
}
