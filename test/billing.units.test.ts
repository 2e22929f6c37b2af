import { expect } from "chai";
import { gasCents, runSeconds, writeCents } from "../billing/pricing";
import { accountRecord, admitRun, admitWrite, payerOf, precheckWrite, type BillingCtx } from "../billing/charges";
import type { Billing, Reservation } from "../billing/service";
import type { Payer } from "../billing/types";

/**
 * Billing's arithmetic and its admissions, rule by rule: prices (rounding always up, never below
 * the fixed part), what a run and a write reserve and settle, who pays (the reservations table:
 * test/billing.store.test.ts). The e2e, gas and ledger tests show the same rules
 * through the relayer and Stripe's double.
 */
const ETHER = 10n ** 18n;

describe("billing, rule by rule", function () {
  describe("pricing", function () {
    it("gasCents: wei / 1e18 x token price x (100 + margin) / 100, rounded up; nothing for no gas or no price", function () {
      const gas = { tokenPriceCents: 300_000, marginPercent: 20 }; // $3,000 a token, 20% margin
      expect(gasCents(ETHER, gas)).to.equal(360_000);
      expect(gasCents(ETHER / 1000n, gas)).to.equal(360); // exact: not rounded up
      expect(gasCents(1n, gas), "one wei is still a cent").to.equal(1);
      expect(gasCents(ETHER / 1000n + 1n, gas)).to.equal(361);
      expect(gasCents(0n, gas)).to.equal(0);
      expect(gasCents(-5n, gas)).to.equal(0);
      expect(gasCents(-ETHER, gas), "negative gas is no refund").to.equal(0);
      expect(gasCents(ETHER, { tokenPriceCents: 0, marginPercent: 20 })).to.equal(0);
      expect(gasCents(ETHER, { tokenPriceCents: -1, marginPercent: 20 })).to.equal(0);
      expect(gasCents(ETHER, { tokenPriceCents: -100, marginPercent: 20 }), "a negative price is no refund").to.equal(0);
      expect(gasCents(ETHER, { tokenPriceCents: 100, marginPercent: 0 })).to.equal(100);
      // a price in fractions of a cent is kept to a millionth of a cent
      expect(gasCents(ETHER * 1_000_000n, { tokenPriceCents: 0.000001, marginPercent: 0 })).to.equal(1);
      expect(gasCents(ETHER * 1_000_000n, { tokenPriceCents: 0.0000015, marginPercent: 0 })).to.equal(2); // rounds to 2 millionths
    });

    it("writeCents: the fixed part plus the gas; runSeconds: each started second, at least one", function () {
      expect(writeCents(ETHER / 1000n, { writeCents: 2, gas: { tokenPriceCents: 300_000, marginPercent: 20 } })).to.equal(362);
      expect(writeCents(0n, { writeCents: 2, gas: { tokenPriceCents: 300_000, marginPercent: 20 } })).to.equal(2);
      expect([0, 1, 999, 1000, 1001, 2000, 2001].map(runSeconds)).to.deep.equal([1, 1, 1, 1, 2, 2, 3]);
    });
  });

  describe("charges", function () {
    type Call = [string, ...unknown[]];
    /** A Billing double that records what it was asked and hands out recording reservations. */
    function billingDouble(config: { secondCents: number; writeCents: number; gas: { tokenPriceCents: number; marginPercent: number } }) {
      const calls: Call[] = [];
      const billing = {
        config,
        reserve: async (payer: Payer, cents: number, what: string, work: unknown): Promise<Reservation> => {
          calls.push(["reserve", payer, cents, what, work]);
          return {
            cents,
            settle: async (c: number, d: string) => void calls.push(["settle", c, d]),
            release: async () => void calls.push(["release"]),
            noteTx: (h: string) => void calls.push(["noteTx", h]),
            noteStart: () => void calls.push(["noteStart"]),
            abandon: () => void calls.push(["abandon"]),
          } as unknown as Reservation;
        },
        covers: async (payer: Payer, cents: number, what: string) => void calls.push(["covers", payer, cents, what]),
      } as unknown as Billing;
      return { billing, calls };
    }
    const ACCOUNT = 0xabcn;
    const ACCOUNT_HEX = `0x${ACCOUNT.toString(16).padStart(64, "0")}`;
    function ctxFor(billing: Billing | undefined, record = { managed: true, adminWalletAddress: "0x00000000000000000000000000000000000000aD" }) {
      const reads: string[] = [];
      const ctx: BillingCtx = {
        billing,
        chain: { accountConfig: { getAccount: async () => record } },
        executor: {
          permissions: {
            read: async <T>(accountHash: bigint, key: string, load: () => Promise<T>) => (reads.push(`${accountHash}/${key}`), load()),
            resolve: async () => ({ accountHash: ACCOUNT }),
          },
        },
      };
      return { ctx, reads };
    }
    const GAS = { tokenPriceCents: 300_000, marginPercent: 20 };

    it("payerOf: a managed account pays for itself, a ChainSecured one through its admin wallet, read through the account's cached view", async function () {
      const managed = ctxFor(undefined);
      expect(await payerOf(managed.ctx, ACCOUNT)).to.deep.equal({ key: `account:${ACCOUNT_HEX}`, account: ACCOUNT_HEX });
      expect(managed.reads).to.deep.equal([`${ACCOUNT}/billing:payer`]);
      const secured = ctxFor(undefined, { managed: false, adminWalletAddress: "0x00000000000000000000000000000000000000aD" });
      expect(await payerOf(secured.ctx, ACCOUNT)).to.deep.equal({ key: "wallet:0x00000000000000000000000000000000000000aD", account: ACCOUNT_HEX });
      expect(await accountRecord(secured.ctx, ACCOUNT)).to.deep.equal({ managed: false, admin: "0x00000000000000000000000000000000000000aD" });
    });

    it("admitRun: reserves each second of the time limit at the per-second price, charges the seconds used (never more), releases on no duration", async function () {
      const { billing, calls } = billingDouble({ secondCents: 3, writeCents: 1, gas: GAS });
      const { ctx } = ctxFor(billing);
      const payer: Payer = { key: "account:x", account: "x" };
      const run = await admitRun(ctx, payer, 30_000);
      expect(calls.shift()).to.deep.equal(["reserve", payer, 90, "a run of up to 30 s (its time limit)", { kind: "run", detail: "up to 30s", unitCents: 3 }]);
      run.started();
      expect(await run.settle(1_500), "the cents charged (the run history records them)").to.equal(6);
      expect(calls.splice(0)).to.deep.equal([["noteStart"], ["settle", 6, "2s"]]);
      expect(await (await admitRun(ctx, payer, 30_000)).settle(45_000)).to.equal(90); // longer than reserved: capped
      expect(calls.splice(0).slice(1)).to.deep.equal([["settle", 90, "30s"]]);
      expect(await (await admitRun(ctx, payer, 1_001)).settle(undefined)).to.equal(0);
      expect(calls.splice(0)).to.deep.equal([["reserve", payer, 6, "a run of up to 2 s (its time limit)", { kind: "run", detail: "up to 2s", unitCents: 3 }], ["release"]]);
      (await admitRun(ctx, payer, 1_000)).release();
      expect(calls.splice(0).slice(1)).to.deep.equal([["release"]]);
    });

    it("admitRun: free (nothing reserved) when billing is off or a second costs nothing", async function () {
      for (const billing of [undefined, billingDouble({ secondCents: 0, writeCents: 1, gas: GAS }).billing]) {
        const run = await admitRun(ctxFor(billing).ctx, { key: "account:x", account: "x" }, 30_000);
        run.started();
        expect(await run.settle(1000)).to.equal(0);
        run.release();
      }
      const { billing, calls } = billingDouble({ secondCents: 0, writeCents: 1, gas: GAS });
      await admitRun(ctxFor(billing).ctx, { key: "account:x", account: "x" }, 30_000);
      expect(calls).to.deep.equal([]);
    });

    it("admitWrite: reserves the fixed price plus the worst gas for the acting key's payer, settles the gas used; gasOnly leaves the fixed part out", async function () {
      const { billing, calls } = billingDouble({ secondCents: 1, writeCents: 2, gas: GAS });
      const { ctx } = ctxFor(billing);
      const payer = { key: `account:${ACCOUNT_HEX}`, account: ACCOUNT_HEX };
      const w = await admitWrite(ctx, "addGroup", 0x1n, ETHER / 1000n);
      expect(calls.shift()).to.deep.equal(["reserve", payer, 362, "a management call (its price and the most gas it may use)", { kind: "write", detail: "addGroup" }]);
      w.noteTx("0xhash");
      w.settle(ETHER / 2000n);
      w.abandon();
      w.release();
      expect(calls.splice(0)).to.deep.equal([["noteTx", "0xhash"], ["settle", 182, "addGroup"], ["abandon"], ["release"]]);
      const step = await admitWrite(ctx, "addGroup", 0x1n, ETHER / 1000n, { gasOnly: true });
      step.settle(0n);
      expect(calls.splice(0)).to.deep.equal([["reserve", payer, 360, "a management call (its price and the most gas it may use)", { kind: "write", detail: "addGroup" }], ["settle", 0, "addGroup"]]);
    });

    it("admitWrite and precheckWrite: nothing for newAccount, billing off, or a price of 0", async function () {
      const { billing, calls } = billingDouble({ secondCents: 1, writeCents: 0, gas: { tokenPriceCents: 0, marginPercent: 0 } });
      const free = await admitWrite(ctxFor(billing).ctx, "addGroup", 0x1n, ETHER);
      free.noteTx("0x1");
      free.settle(ETHER);
      free.abandon();
      free.release();
      await precheckWrite(ctxFor(billing).ctx, "addGroup", 0x1n, ETHER);
      const paid = billingDouble({ secondCents: 1, writeCents: 2, gas: GAS });
      await admitWrite(ctxFor(paid.billing).ctx, "newAccount", 0x1n, ETHER);
      await precheckWrite(ctxFor(paid.billing).ctx, "newAccount", 0x1n, ETHER);
      await admitWrite(ctxFor(undefined).ctx, "addGroup", 0x1n, ETHER);
      await precheckWrite(ctxFor(undefined).ctx, "addGroup", 0x1n, ETHER);
      expect([calls, paid.calls]).to.deep.equal([[], []]);
    });

    it("precheckWrite: asks whether the acting key's payer covers the fixed price plus the least gas", async function () {
      const { billing, calls } = billingDouble({ secondCents: 1, writeCents: 2, gas: GAS });
      await precheckWrite(ctxFor(billing).ctx, "addGroup", 0x1n, ETHER / 1000n);
      expect(calls).to.deep.equal([["covers", { key: `account:${ACCOUNT_HEX}`, account: ACCOUNT_HEX }, 362, "a management call"]]);
    });
  });
});
