import { ethers } from "hardhat";
import { Wallet, type BaseWallet } from "ethers";
import { buildTypedData } from "../../protocol/eip712";
import { walletAuthHeader } from "../../relayer/http/walletAuth";
import { signEnvelope } from "../../scripts/lib/chainSecured";
import { chainSecuredHash } from "./accountConfig";
import type { Stack } from "./relayer";

/** A fresh wallet on the in-process chain, funded by signer 0 (it pays its own gas). */
export async function fundedWallet(): Promise<Wallet> {
  const wallet = new Wallet(Wallet.createRandom().privateKey, ethers.provider);
  const [funder] = await ethers.getSigners();
  await (await funder.sendTransaction({ to: wallet.address, value: ethers.parseEther("1") })).wait();
  return wallet;
}

/** A wallet-owned account: a funded wallet that called newChainSecuredAccount, and the contract as that wallet. */
export async function walletAccount(stack: Stack, name = "wallet-owned") {
  const wallet = await fundedWallet();
  const config = stack.config.connect(wallet);
  await (await config.newChainSecuredAccount(name, "")).wait();
  return { wallet, config, hash: chainSecuredHash(wallet.address) };
}
export type WalletAccount = Awaited<ReturnType<typeof walletAccount>>;

/** The X-Wallet-Auth header of `wallet` (BillingAuth, issued now), naming `account` when given. */
export async function walletAuthHeaders(stack: Stack, wallet: BaseWallet, account?: bigint): Promise<Record<string, string>> {
  const td = buildTypedData("BillingAuth", { chainId: stack.relayer.ctx.chain.chainId, address: wallet.address, issuedAt: Math.floor(Date.now() / 1000) });
  return { "x-wallet-auth": walletAuthHeader(td, await signEnvelope(wallet, td), account) };
}
