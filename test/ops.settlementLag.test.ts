import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { expect } from "chai";
import pino from "pino";
import { Ledger } from "../billing/ledger";
import { Settler } from "../billing/settler";
import type { BalanceRemote } from "../billing/types";

describe("billing settlement lag (vesta_billing_settlement_lag_seconds)", function () {
  it("is 0 when every batch settled, the age of the oldest batch left open while the provider refuses, and 0 again once it settles", async function () {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "vesta-lag-"));
    const ledger = await Ledger.open({ sqliteFile: path.join(dir, "billing.sqlite") });
    let down = true;
    let n = 0;
    const remote: BalanceRemote = {
      customer: async () => ({ id: "cus_1", creditCents: 1000 }),
      credit: async () => 1000,
      adjust: async (_c, delta) => {
        if (down) throw new Error("provider unavailable");
        return { id: `adj_${++n}`, endingCreditCents: 1000 + delta };
      },
      findAdjustment: async () => undefined,
    };
    const settler = new Settler(ledger, remote, pino({ level: "silent" }), () => undefined);
    try {
      expect(settler.lagSeconds()).to.equal(0);
      await ledger.commits.add((q) => ledger.debit("cus_1", 3, "run", "a run", q));
      expect((await settler.settle()).failed).to.equal(1);
      await new Promise((r) => setTimeout(r, 300));
      expect(settler.lagSeconds()).to.be.within(0.25, 5);
      down = false;
      expect((await settler.settle()).batches).to.equal(1);
      expect(settler.lagSeconds()).to.equal(0);
    } finally {
      await ledger.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
