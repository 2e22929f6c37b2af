import type { TransactionReceipt } from "ethers";
import type { AccountConfig } from "../../typechain-types";
import type { Ctx } from "../context";
import { AppError } from "../errors";
import { decodeRevert } from "./revert";
import { admitWrite } from "../../billing/charges";

type WriteName = string;

/**
 * Relays one AccountConfig write through the payer pool. The write is first simulated
 * (estimateGas from a payer), so a write the contract rejects answers with its decoded error and
 * costs nothing; then the acting key's account is charged (402 without credit), it is sent, and the
 * answer comes once it is mined.
 */
export async function relayWrite(ctx: Ctx, method: WriteName, args: unknown[]): Promise<TransactionReceipt> {
  const contract = ctx.chain.accountConfig;
  const to = await contract.getAddress();
  const data = contract.interface.encodeFunctionData(method as never, args as never);
  const from = ctx.payers.addresses()[0];
  let gas: bigint;
  try {
    gas = await ctx.chain.provider.estimateGas({ to, data, from });
  } catch (err) {
    throw decodeRevert(contract.interface, err);
  }
  const charge = await admitWrite(ctx, method, args[0] as bigint); // 402 before anything is sent
  const receipt = await ctx.payers.send({ to, data, gasLimit: (gas * 12n) / 10n + 20_000n }, (err) => decodeRevert(contract.interface, err));
  if (receipt.status !== 1) {
    try {
      await ctx.chain.provider.call({ to, data, from });
    } catch (err) {
      throw decodeRevert(contract.interface, err);
    }
    throw new AppError(409, "write_rejected", "the write reverted on chain (the state changed meanwhile); nothing changed, try again");
  }
  charge();
  // Every AccountConfig event names its account in topic 1: drop what is cached for those accounts now.
  for (const log of receipt.logs) if (log.address.toLowerCase() === to.toLowerCase() && log.topics[1]) ctx.executor.permissions.invalidate(BigInt(log.topics[1]));
  return receipt;
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
export function cachedRead<T>(ctx: Ctx, accountHash: bigint, key: string, call: (c: AccountConfig) => Promise<T>): Promise<T> {
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
