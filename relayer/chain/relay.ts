import type { TransactionReceipt, TransactionRequest } from "ethers";
import type { IAccountConfig } from "../../typechain-types";
import type { Ctx } from "../context";
import { AppError } from "../errors";
import type { ErrorCode } from "../../protocol/errors";
import { decodeRevert, revertOf } from "./revert";
import { notOwner } from "../identity/service";
import { TxNotSent, type WriteOwner } from "./payers";
import { admitWrite, payerOf, precheckWrite, type WriteCharge } from "../../billing/charges";
import { hex32 } from "../../protocol/usageKeyShape";
import { writeCents } from "../../billing/pricing";
import type { ReservationRow } from "../../billing/reservations";
import type { WriteOutcome } from "../../billing/recovery";
import type { DerivedWallet } from "../../executor/keys/provider";
import { sendAsOwner, TOP_UP_GAS } from "./ownerSend";
import { outcomeOf } from "../metrics";

type WriteName = string;

/**
 * What any relayed write may answer (the route adds the not-found and conflict codes of its own
 * contract function): the key and scope checks the contract repeats, credit, the chain and the payers.
 */
export const WRITE_ERRORS: ErrorCode[] = [
  "invalid_api_key",
  "write_queue_full",
  "payment_required",
  "missing_scope",
  "owner_only",
  "account_chain_secured",
  "already_exists",
  "write_rejected",
  "write_too_large",
  "chain_unavailable",
  "payer_not_authorized",
  "chain_timeout",
];

/** The most gas one transaction may use (EIP-7825's cap, which Hardhat and Ethereum enforce). */
export const MAX_TX_GAS = 16_777_216n;

/** The gas limit of a write: its estimate with headroom (the state may change before it is mined), within a transaction's cap. */
export const gasLimitOf = (estimate: bigint): bigint => {
  const limit = (estimate * 12n) / 10n + 20_000n;
  return limit < MAX_TX_GAS ? limit : MAX_TX_GAS;
};

/**
 * The fee fields of a write, fixed before it is admitted, and the highest price per gas they let it
 * pay: EIP-1559 maxFeePerGas, or the legacy gas price.
 */
export async function feesOf(ctx: Ctx): Promise<{ fields: Pick<TransactionRequest, "maxFeePerGas" | "maxPriorityFeePerGas" | "gasPrice">; worstPrice: bigint }> {
  const fee = await ctx.chain.provider.getFeeData();
  if (fee.maxFeePerGas !== null && fee.maxPriorityFeePerGas !== null) {
    lastPrice.set(ctx, fee.maxFeePerGas);
    return { fields: { maxFeePerGas: fee.maxFeePerGas, maxPriorityFeePerGas: fee.maxPriorityFeePerGas }, worstPrice: fee.maxFeePerGas };
  }
  if (fee.gasPrice === null) throw new AppError(503, "chain_unavailable", "the chain gave no gas price; nothing changed, try again");
  lastPrice.set(ctx, fee.gasPrice);
  return { fields: { gasPrice: fee.gasPrice }, worstPrice: fee.gasPrice };
}

/** The last price per gas the chain asked (0 before the first write). */
const lastPrice = new WeakMap<Ctx, bigint>();
/** The least gas any relayed write uses (a transaction's base cost plus a storage write). */
const LEAST_WRITE_GAS = 45_000n;

/**
 * 402 before any RPC or key derivation when the acting key's account cannot pay the cheapest write
 * at the last known gas price (the full worst case is reserved once the write is simulated).
 */
export const precheckRelayedWrite = (ctx: Ctx, method: WriteName, actingKeyHash: bigint): Promise<void> =>
  precheckWrite(ctx, method, actingKeyHash, LEAST_WRITE_GAS * (lastPrice.get(ctx) ?? 0n));

/**
 * Whose write it is, for the payers' fair share: the billing payer of the acting key's account
 * (payerOf). An account whose own hash acts (a wallet-owned account's usage keys) is its own;
 * new_account gives its owner itself (the client asking).
 */
async function writeOwner(ctx: Ctx, actingKeyHash: bigint): Promise<WriteOwner> {
  const resolved = (await ctx.executor.permissions.resolve(actingKeyHash)).accountHash;
  const accountHash = resolved === 0n ? actingKeyHash : resolved;
  return { payer: (await payerOf(ctx, accountHash)).key, account: hex32(accountHash), key: hex32(actingKeyHash) };
}

/**
 * Relays one AccountConfig write through the payer pool. It takes its place in the payers' fair
 * queue first (429 write_queue_full when its payer's share is full); in its turn, with a payer wallet
 * of its own, it is simulated (estimateGas), so a write the contract rejects answers with its
 * decoded error and costs nothing; then the acting key's account reserves the write's worst case
 * (its fixed price and gas limit x max fee; 402 without credit), it is signed (its hash recorded
 * with the reservation), sent, and once mined the account is charged the gas it used at the price
 * it paid, also when it reverted on chain (e.g. it raced an identical write): the payers paid for it
 * either way. A write that did not reach the chain (TxNotSent) costs nothing.
 * `stepOf`: the write is a step of another (the reservation before `setUsageApiKey` or `newAccount`),
 * billed as that write, for its gas only (the write itself charges the fixed price).
 * `owner` is given for a write that acts for no account yet (new_account and its step); otherwise
 * it is the acting key's (args[0]).
 * `signer`: the write is the account owner's own, sent from its identity wallet (sendAsOwner: the
 * payer tops the wallet up in the write's turn; both gas costs are charged), not from the payer.
 */
export async function relayWrite(
  ctx: Ctx,
  method: WriteName,
  args: unknown[],
  opts: { stepOf?: WriteName; owner?: WriteOwner; signer?: DerivedWallet } = {},
): Promise<TransactionReceipt> {
  // Tracked for shutdown (its charge is settled before the ledger closes) and counted by outcome.
  const mined: { receipt?: TransactionReceipt } = {};
  try {
    const receipt = await ctx.drain.track(relayOnce(ctx, method, args, opts, mined));
    ctx.metrics.observeWrite("ok", receipt.gasUsed);
    return receipt;
  } catch (err) {
    ctx.metrics.observeWrite(outcomeOf(err), mined.receipt?.gasUsed);
    throw err;
  }
}

async function relayOnce(ctx: Ctx, method: WriteName, args: unknown[], opts: { stepOf?: WriteName; owner?: WriteOwner; signer?: DerivedWallet }, mined: { receipt?: TransactionReceipt }): Promise<TransactionReceipt> {
  const contract = ctx.chain.accountConfig;
  const to = await contract.getAddress();
  const data = contract.interface.encodeFunctionData(method as never, args as never);
  const signer = opts.signer;
  const from = signer?.address ?? ctx.payers.addresses()[0];
  const billedAs = opts.stepOf ?? method;
  await precheckRelayedWrite(ctx, billedAs, args[0] as bigint); // 402 before anything is simulated (a step: as the write it prepares)
  const place = ctx.payers.admit(opts.owner ?? (await writeOwner(ctx, args[0] as bigint))); // 429 before anything is simulated
  let receipt: TransactionReceipt;
  try {
    // In its turn, with a payer wallet of its own: simulated, priced, admitted (402), sent.
    receipt = await place.run(async (send) => {
      let gas: bigint;
      try {
        gas = await ctx.chain.provider.estimateGas({ to, data, from });
      } catch (err) {
        // An owner wallet the contract does not take as the admin (the account was handed over meanwhile): not the payers' fault.
        if (signer && revertOf(contract.interface, err)?.name === "NotAuthorizedCaller") throw notOwner(args[0] as bigint);
        throw decodeRevert(contract.interface, err);
      }
      if (gas > MAX_TX_GAS) throw new AppError(413, "write_too_large", `this write needs ${gas} gas, more than one transaction may use (${MAX_TX_GAS}); nothing was sent: split it (shorter lists)`);
      const gasLimit = gasLimitOf(gas);
      const fees = await feesOf(ctx);
      const worstGas = signer ? gasLimit + TOP_UP_GAS : gasLimit;
      // The worst case includes the replacements of a transaction that gets stuck (each raises its
      // fees; payers.ts never lets them pass this price): their cost is the account's, as the first's.
      const worstPrice = ctx.payers.worstPriceOf(fees.worstPrice);
      const charge = await admitWrite(ctx, billedAs, args[0] as bigint, worstGas * worstPrice, { gasOnly: opts.stepOf !== undefined }); // 402 before anything is sent
      const hashes: string[] = []; // the transaction's, then each replacement's
      let mined: TransactionReceipt;
      let topUpWei = 0n;
      const decode = (err: unknown) => decodeRevert(contract.interface, err);
      const onSigned = (signed: string) => {
        hashes.push(signed);
        return charge.noteTx(signed); // recorded before the broadcast
      };
      try {
        const tx = { to, data, gasLimit, ...fees.fields };
        if (signer) ({ receipt: mined, topUpWei } = await sendAsOwner(ctx, send, signer, tx, fees.worstPrice, decode, onSigned));
        else mined = await send(tx, decode, onSigned);
      } catch (err) {
        await chargeFailedSend(ctx, charge, hashes, err);
        throw err;
      }
      await charge.settle(mined.fee + topUpWei);
      return mined;
    });
  } finally {
    place.release(); // a write refused before its turn gives its place back (no-op once queued)
  }
  mined.receipt = receipt;
  if (receipt.status !== 1) {
    const rejected = new AppError(409, "write_rejected", "the write reverted on chain (the state changed meanwhile); nothing changed, try again");
    const why = await ctx.chain.provider.call({ to, data, from }).then(
      () => rejected,
      (err) => decodeRevert(contract.interface, err),
    );
    throw why instanceof AppError ? why : rejected; // the reason, when the chain still tells it
  }
  // Every AccountConfig event names its account in topic 1 (and a usage key set, in topic 2): drop
  // what is cached for those accounts and keys now.
  for (const log of receipt.logs) if (log.address.toLowerCase() === to.toLowerCase()) ctx.executor.permissions.seen(log.topics);
  return receipt;
}

/**
 * A send that did not end with a receipt: nothing signed or delivered, nothing to charge; a transaction mined
 * anyway (some nodes, Hardhat's among them, mine a reverting transaction and report the revert at
 * send time) is charged what it cost; one that may still land (a timeout, a lost answer) is left to
 * billing's recovery, which looks for its receipt.
 */
async function chargeFailedSend(ctx: Ctx, charge: WriteCharge, hashes: string[], err: unknown): Promise<void> {
  if (hashes.length === 0 || err instanceof TxNotSent) return charge.release();
  const receipt = await minedOf(ctx, hashes).catch(() => null);
  if (receipt) return charge.settle(receipt.fee);
  if (err instanceof AppError && err.status < 500) return charge.release(); // refused before it reached the chain
  charge.abandon();
}

/**
 * What a write left to recovery cost (billing's `resolveWrite`): its price from its receipt; while it
 * may still land (within the transaction timeout, or still known to the node), "pending"; else 0.
 */
export async function recoveredWriteCost(ctx: Ctx, r: ReservationRow): Promise<WriteOutcome> {
  // The transaction and its replacements share one nonce: at most one is mined, and it may be any of them.
  const receipt = await minedOf(ctx, r.txHashes);
  if (receipt) return writeCents(receipt.fee, ctx.billing!.config);
  if (Date.now() - r.createdAt < ctx.config.txTimeoutMs) return "pending";
  for (const h of r.txHashes) if (await ctx.chain.provider.getTransaction(h)) return "pending";
  return 0;
}

/** The receipt of whichever of `hashes` (a transaction and its replacements) was mined, if one was. */
async function minedOf(ctx: Ctx, hashes: string[]): Promise<TransactionReceipt | null> {
  for (const h of hashes) {
    const receipt = await ctx.chain.provider.getTransactionReceipt(h);
    if (receipt) return receipt;
  }
  return null;
}

/** Decodes view errors (e.g. GroupNotFound) the same way as writes. */
export async function read<T>(ctx: Ctx, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    throw decodeRevert(ctx.chain.accountConfig.interface, err);
  }
}

/**
 * A read of one account's on-chain state through the event-synced cache (dropped when an event of
 * that account is seen; see PermissionCache.read), with view errors decoded like `read`.
 */
export function cachedRead<T>(ctx: Ctx, accountHash: bigint, key: string, call: (c: IAccountConfig) => Promise<T>): Promise<T> {
  return read(ctx, () => ctx.executor.permissions.read(accountHash, key, () => call(ctx.chain.accountConfig)));
}

/** The first event `name` emitted by AccountConfig in `receipt`. */
export function eventArgs(ctx: Ctx, receipt: TransactionReceipt, name: string) {
  for (const log of receipt.logs) {
    const parsed = (() => {
      try {
        return ctx.chain.accountConfig.interface.parseLog(log);
      } catch {
        return null;
      }
    })();
    if (parsed?.name === name) return parsed.args;
  }
  throw new AppError(500, "internal_error", `the transaction emitted no ${name} event`);
}
