import type { Payer } from "./types";
import type { Billing, Reservation } from "./service";
import { gasCents, runSeconds, writeCents } from "./pricing";
import { hex32 } from "../protocol/usageKeyShape";

/**
 * What billing needs of the service it runs in (the relayer's context has it): the ledger, the
 * account's on-chain record, and the event-synced cache that holds reads of it.
 */
export type BillingCtx = {
  /** Credits and charges; absent when billing is off. */
  billing?: Billing;
  chain: { accountConfig: { getAccount(accountHash: bigint): Promise<{ managed: boolean; adminWalletAddress: string }> } };
  executor: {
    permissions: {
      /** A read of one account's state, cached until an event of that account is seen. */
      read<T>(accountHash: bigint, key: string, load: () => Promise<T>): Promise<T>;
      /** The account a key belongs to. */
      resolve(keyHash: bigint): Promise<{ accountHash: bigint }>;
    };
  };
};

/** Relayed writes that cost the account nothing: creating an account (new_account, or an identity's first sign-in; the account does not exist yet). */
const FREE_WRITES = new Set(["newAccount", "newChainSecuredAccount"]);

export type AccountRecord = { managed: boolean; admin: string };

/**
 * An existing account's mode and admin wallet, read through the event-synced cache (dropped when an
 * event of the account is seen). `admin` is the contract's `adminWalletAddress`: the wallet that
 * holds the account, never one merely proposed to take it over (ownership moves in two steps; a
 * proposal is not read here).
 */
export function accountRecord(ctx: BillingCtx, accountHash: bigint): Promise<AccountRecord> {
  return ctx.executor.permissions.read(accountHash, "billing:payer", async () => {
    const record = await ctx.chain.accountConfig.getAccount(accountHash);
    return { managed: record.managed, admin: record.adminWalletAddress };
  });
}

/**
 * Who pays for `accountHash`: the account itself while managed, its admin wallet once ChainSecured
 * (spec 2: conversion re-routes billing to the new admin wallet's customer record). Nothing a third
 * party sends decides it: only the account's on-chain mode and admin, as the contract holds them.
 */
/**
 * The account classes of the sandbox's fair share, by who pays (payerOf's key): `managed` (an
 * account in API mode pays for itself) and `wallet` (a ChainSecured account: its admin wallet pays,
 * one share for every account it holds). Metrics break sandbox occupancy and queue depth down by it.
 */
export const ACCOUNT_CLASSES = ["managed", "wallet"] as const;
export type AccountClass = (typeof ACCOUNT_CLASSES)[number];
export const accountClassOf = (payerKey: string): AccountClass => (payerKey.startsWith("wallet:") ? "wallet" : "managed");

export async function payerOf(ctx: BillingCtx, accountHash: bigint): Promise<Payer> {
  const a = await accountRecord(ctx, accountHash);
  const account = hex32(accountHash);
  return a.managed ? { key: `account:${account}`, account } : { key: `wallet:${a.admin}`, account };
}

/**
 * What a run route does with its admission: `started()` when the run leaves the queue for a sandbox
 * (the executor's onStart), then settle once the run ended (or release it when it never ran).
 * settle and release resolve once the debit is committed (they never reject): await them before
 * answering.
 */
export type RunCharge = {
  started(): void;
  /** What settle(durationMs) charges, in cents (known before its commit, e.g. for the run's record committed beside it). */
  cost(durationMs: number | undefined): number;
  settle(durationMs: number | undefined): Promise<number>;
  release(): Promise<void>;
};
/** What a relayed write does with its admission (see relayWrite); settle and release as a run's. */
export type WriteCharge = { noteTx(txHash: string): Promise<void>; settle(gasWei: bigint): Promise<void>; release(): Promise<void>; abandon(): void };

const nothing = () => Promise.resolve();
const FREE_RUN: RunCharge = { started: () => undefined, cost: () => 0, settle: () => Promise.resolve(0), release: nothing };
const FREE_WRITE: WriteCharge = { noteTx: nothing, settle: nothing, release: nothing, abandon: () => undefined };

/**
 * Admits an action run billed to `payer` (payerOf the run's account) by reserving its worst case,
 * `worstCaseMs` (its time limit) at the per-second price (402 when the balance, less the credit
 * other work holds, does not cover it). `settle(durationMs)` charges each started second it held a worker (never more than reserved),
 * frees the rest and answers the cents charged; `release()` (or settle(undefined), which answers 0) frees it all.
 */
export async function admitRun(ctx: BillingCtx, payer: Payer, worstCaseMs: number): Promise<RunCharge> {
  const billing = ctx.billing;
  const unit = billing?.config.secondCents ?? 0;
  if (!billing || unit === 0) return FREE_RUN;
  const seconds = runSeconds(worstCaseMs);
  const r = await billing.reserve(payer, seconds * unit, `a run of up to ${seconds} s (its time limit)`, { kind: "run", detail: `up to ${seconds}s`, unitCents: unit });
  const charged = (durationMs: number) => Math.min(seconds, runSeconds(durationMs));
  return {
    started: () => r.noteStart(),
    cost: (durationMs) => (durationMs === undefined ? 0 : charged(durationMs) * unit),
    settle: (durationMs) => {
      if (durationMs === undefined) return r.release().then(() => 0);
      return r.settle(charged(durationMs) * unit, `${charged(durationMs)}s`).then(() => charged(durationMs) * unit);
    },
    release: () => r.release(),
  };
}

/**
 * Before anything is simulated or derived for a relayed write: 402 when the acting key's account
 * cannot pay even `leastWei` of gas and the fixed price (a refusal must not cost us more than the
 * caller: no estimateGas, fee reads or key derivation for an account that cannot pay).
 */
export async function precheckWrite(ctx: BillingCtx, method: string, actingKeyHash: bigint, leastWei: bigint): Promise<void> {
  const billing = ctx.billing;
  if (!billing || FREE_WRITES.has(method)) return;
  const least = writeCents(leastWei, billing.config);
  if (least === 0) return;
  const { accountHash } = await ctx.executor.permissions.resolve(actingKeyHash);
  await billing.covers(await payerOf(ctx, accountHash), least, "a management call");
}

/**
 * Admits a relayed write of the acting key's account before it is sent, by reserving its worst case:
 * the fixed price plus `worstGasWei` (its gas limit at the highest gas price it may pay). 402 when
 * it does not fit. `settle(gasWei)` charges the gas it used at the price it paid (a write that
 * reverted on chain included: the payers paid for it). `gasOnly`: a step of another write, whose
 * fixed price that write charges (its gas is charged all the same).
 */
export async function admitWrite(ctx: BillingCtx, method: string, actingKeyHash: bigint, worstGasWei: bigint, opts: { gasOnly?: boolean } = {}): Promise<WriteCharge> {
  const billing = ctx.billing;
  if (!billing || FREE_WRITES.has(method)) return FREE_WRITE;
  const price = (wei: bigint) => (opts.gasOnly ? gasCents(wei, billing.config.gas) : writeCents(wei, billing.config));
  const worst = price(worstGasWei);
  if (worst === 0) return FREE_WRITE;
  const { accountHash } = await ctx.executor.permissions.resolve(actingKeyHash);
  const r: Reservation = await billing.reserve(await payerOf(ctx, accountHash), worst, "a management call (its price and the most gas it may use)", { kind: "write", detail: method });
  return {
    noteTx: (hash) => r.noteTx(hash),
    settle: (gasWei) => r.settle(price(gasWei), method),
    release: () => r.release(),
    abandon: () => r.abandon(),
  };
}
