import type { Ctx } from "../relayer/context";
import type { Payer } from "./types";
import { hex32 } from "../executor/keys/provider";

/** Relayed writes that cost nothing: creating an account (unauthenticated; the account does not exist yet). */
const FREE_WRITES = new Set(["newAccount"]);
const none = () => undefined;


/**
 * Who pays for `accountHash`: the account itself while managed, its admin wallet once ChainSecured
 * (spec 2: conversion re-routes billing to the new admin wallet's customer record). Read through
 * the event-synced cache, so a conversion, relayed here or sent to the contract directly, re-routes
 * billing at once or at the next poll.
 */
export async function payerOf(ctx: Ctx, accountHash: bigint): Promise<Payer> {
  const a = await ctx.executor.permissions.read(accountHash, "billing:payer", async () => {
    const record = await ctx.chain.accountConfig.getAccount(accountHash);
    return { managed: record.managed, admin: record.adminWalletAddress };
  });
  const account = hex32(accountHash);
  return a.managed ? { key: `account:${account}`, account } : { key: `wallet:${a.admin}`, account };
}

/**
 * Admits a relayed write of the acting key's account before it is sent (402 without credit) and
 * returns what to call once it landed: the debit of one management call.
 */
export async function admitWrite(ctx: Ctx, method: string, actingKeyHash: bigint): Promise<() => void> {
  const billing = ctx.billing;
  const cents = billing?.config.writeCents ?? 0;
  if (!billing || cents === 0 || FREE_WRITES.has(method)) return none;
  const { accountHash } = await ctx.executor.permissions.resolve(actingKeyHash);
  const customerId = await billing.admit(await payerOf(ctx, accountHash), cents, "a management call");
  return () => billing.debit(customerId, cents, "write", method);
}

/**
 * Admits an action run of `accountHash` (402 unless the balance covers one second) and returns
 * what to call once it ended: the debit of each started second it held a worker.
 */
export async function admitRun(ctx: Ctx, accountHash: bigint): Promise<(durationMs: number | undefined) => void> {
  const billing = ctx.billing;
  const cents = billing?.config.secondCents ?? 0;
  if (!billing || cents === 0) return none;
  const customerId = await billing.admit(await payerOf(ctx, accountHash), cents, "a second of action execution");
  return (durationMs) => {
    if (durationMs === undefined) return;
    const seconds = Math.max(1, Math.ceil(durationMs / 1000));
    billing.debit(customerId, seconds * cents, "run", `${seconds}s`);
  };
}
