import { Wallet, type TransactionReceipt, type TransactionRequest } from "ethers";
import type { Ctx } from "../context";
import type { OnSigned, Sender } from "./payers";
import type { DerivedWallet } from "../../executor/keys/provider";

/** Gas of a plain value transfer (the payer's top-up of an owner wallet). */
export const TOP_UP_GAS = 21_000n;

/** One owner wallet's sends at a time (its nonce and balance are read, then used). */
const locks = new Map<string, Promise<unknown>>();

/** Runs `work` once the previous work of `key` has settled. */
export async function serialized<T>(key: string, work: () => Promise<T>): Promise<T> {
  const previous = locks.get(key) ?? Promise.resolve();
  const mine = previous.then(work, work);
  const tail = mine.catch(() => undefined);
  locks.set(key, tail);
  try {
    return await mine;
  } finally {
    if (locks.get(key) === tail) locks.delete(key);
  }
}

/**
 * Sends `tx` from an identity's owner wallet (its key derived in the key provider, never leaving
 * the process), so the contract sees the owner as the caller. Gas: in the write's turn, the payer
 * it was given tops the owner wallet up to the write's worst case (gas limit x max fee), only what
 * it lacks, then the owner wallet sends. Resolves with the write's receipt and the wei the top-up
 * cost (the account is charged both, like any relayed write's gas). What a write does not burn
 * stays in the wallet for its next write: at most one write's worst case sits there.
 */
export async function sendAsOwner(
  ctx: Ctx,
  send: Sender,
  owner: DerivedWallet,
  tx: TransactionRequest & { gasLimit: bigint },
  worstPrice: bigint,
  decode: (err: unknown) => unknown,
  onSigned: OnSigned,
): Promise<{ receipt: TransactionReceipt; topUpWei: bigint }> {
  return serialized(owner.address, async () => {
    let topUpWei = 0n;
    const need = tx.gasLimit * worstPrice;
    const balance = await ctx.chain.provider.getBalance(owner.address, "pending");
    if (balance < need) {
      const { to: _to, data: _data, gasLimit: _gas, ...fees } = tx;
      const topUp = await send({ ...fees, to: owner.address, value: need - balance, gasLimit: TOP_UP_GAS });
      topUpWei = topUp.fee;
    }
    const receipt = await ctx.payers.sendFrom(new Wallet(owner.privateKey), tx, decode, onSigned);
    return { receipt, topUpWei };
  });
}
