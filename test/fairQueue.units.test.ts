import { expect } from "chai";
import { FairQueue, defaultFairShare, type FairShare } from "../executor/sandbox/host/fair-queue";
import type { RunOwner } from "../executor/sandbox/types";

/**
 * The fair queue (host/fair-queue.ts) on its own, rule by rule: places held before work and what
 * counts them, put-back jobs, draining, each share (payer, account, key) and the turn order. The
 * "fair share" tests of executor.bounds and the HTTP fairness tests show the same through the pool.
 */
type J = { owner: RunOwner; n: number };
const share = (over: Partial<FairShare> = {}): FairShare => ({ perPayer: 100, perAccount: 100, perKey: 100, queuePerPayer: 100, queuePerAccount: 100, queueTotal: 1000, ...over });
const o = (account: string, key = "k", payer?: string): RunOwner => ({ account, key, ...(payer ? { payer } : {}) });
const takeAll = (q: FairQueue<J>) => {
  const out: number[] = [];
  for (let j = q.take(); j; j = q.take()) out.push(j.n);
  return out;
};

describe("FairQueue, rule by rule", function () {
  it("a held place counts for its account and payer until it is queued (then it waits) or released (then it is gone)", function () {
    const q = new FairQueue<J>(share());
    const h = q.hold(o("a", "k", "p"));
    if (typeof h === "string") expect.fail(h);
    expect([q.length, q.waiting, q.queuedFor(o("a", "k", "p"), "account"), q.queuedFor(o("a", "k", "p"), "payer")]).to.deep.equal([1, 0, 1, 1]);
    q.enqueue(h, { owner: h.owner, n: 1 });
    expect([h.state, q.length, q.waiting]).to.deep.equal(["queued", 1, 1]);
    expect(() => q.enqueue(h, { owner: h.owner, n: 1 })).to.throw("FairQueue: this place was used or released");
    q.release(h); // used: nothing to give back
    expect([h.state, q.length, q.waiting, q.queuedFor(o("a"), "account")]).to.deep.equal(["queued", 1, 1, 1]);
    expect(q.take()?.n).to.equal(1);
    expect([q.length, q.waiting, q.queuedFor(o("a"), "account"), q.queuedFor(o("a", "k", "p"), "payer")]).to.deep.equal([0, 0, 0, 0]);
    const g = q.hold(o("b"));
    if (typeof g === "string") expect.fail(g);
    q.release(g);
    q.release(g); // twice: once
    expect([g.state, q.length, q.queuedFor(o("b"), "account")]).to.deep.equal(["released", 0, 0]);
    expect(() => q.enqueue(g, { owner: g.owner, n: 2 })).to.throw("FairQueue: this place was used or released");
  });

  it("an account without a payer is its own payer; accounts of one payer share the payer's bounds", function () {
    const q = new FairQueue<J>(share({ perPayer: 1, queuePerPayer: 1, perAccount: 5, queuePerAccount: 5 }));
    expect([q.offer({ owner: o("a"), n: 1 }), q.offer({ owner: o("a"), n: 2 }), q.offer({ owner: o("a"), n: 3 })]).to.deep.equal(["ok", "ok", "payer"]);
    expect(q.offer({ owner: o("b"), n: 4 }), "another account, its own payer").to.equal("ok");
    expect(q.queuedFor(o("a"), "payer")).to.equal(2);
    const r = new FairQueue<J>(share({ perPayer: 1, queuePerPayer: 1 }));
    expect([r.offer({ owner: o("a", "k", "w"), n: 1 }), r.offer({ owner: o("b", "k", "w"), n: 2 }), r.offer({ owner: o("c", "k", "w"), n: 3 })]).to.deep.equal(["ok", "ok", "payer"]);
    expect(r.queuedFor(o("c", "k", "w"), "payer")).to.equal(2);
  });

  it("bounds compare with >=: share plus queue exactly fits, one more is refused; the total bound is checked first", function () {
    const q = new FairQueue<J>(share({ perAccount: 1, queuePerAccount: 1, queueTotal: 2 }));
    expect([q.offer({ owner: o("a"), n: 1 }), q.offer({ owner: o("a"), n: 2 })]).to.deep.equal(["ok", "ok"]);
    expect(q.offer({ owner: o("a"), n: 3 }), "account and total both full: total answers").to.equal("total");
    expect(q.take()?.n).to.equal(1); // one running, one waiting: the account is full (1 + 1), the total is not (1 place)
    expect(q.offer({ owner: o("a"), n: 3 })).to.equal("account");
    expect(q.offer({ owner: o("b"), n: 4 })).to.equal("ok");
    expect(q.offer({ owner: o("c"), n: 5 })).to.equal("total");
  });

  it("each key runs at most its share: another key's job of the same account is taken past it", function () {
    const q = new FairQueue<J>(share({ perKey: 1 }));
    q.offer({ owner: o("a", "k1"), n: 1 });
    q.offer({ owner: o("a", "k1"), n: 2 });
    q.offer({ owner: o("a", "k2"), n: 3 });
    expect(takeAll(q)).to.deep.equal([1, 3]);
    q.finished({ owner: o("a", "k1"), n: 1 });
    expect(takeAll(q)).to.deep.equal([2]);
  });

  it("a payer or an account at its share is skipped, the others served; finishing frees exactly one run", function () {
    const q = new FairQueue<J>(share({ perPayer: 2, perAccount: 1 }));
    for (const [acc, n] of [["a", 1], ["a", 2], ["b", 3], ["b", 4], ["c", 5]] as const) q.offer({ owner: o(acc, "k", acc === "c" ? "q" : "p"), n });
    // payer p: a and b, one each (its share: 2); payer q: c
    expect(takeAll(q)).to.deep.equal([1, 5, 3]);
    q.finished({ owner: o("a", "k", "p"), n: 1 });
    expect(takeAll(q)).to.deep.equal([2]);
    q.finished({ owner: o("b", "k", "p"), n: 3 });
    expect(takeAll(q)).to.deep.equal([4]);
    expect(q.take()).to.equal(undefined);
  });

  it("a put-back job goes ahead of its account's queue, and a payer with nothing else waiting ahead of the others; it counts as waiting again", function () {
    const q = new FairQueue<J>(share({ perAccount: 1 }));
    q.offer({ owner: o("a"), n: 1 });
    q.offer({ owner: o("a"), n: 2 });
    q.offer({ owner: o("b"), n: 3 });
    const first = q.take()!;
    expect(first.n).to.equal(1);
    q.requeue(first);
    expect([q.waiting, q.queuedFor(o("a"), "account")]).to.deep.equal([3, 2]);
    // a's share (1) is free again; a's turn had passed (b is next), and within a, 1 is ahead of 2
    expect(takeAll(q)).to.deep.equal([3, 1]);
    q.finished(first);
    expect(takeAll(q)).to.deep.equal([2]);
    q.offer({ owner: o("c"), n: 4 });
    q.offer({ owner: o("e"), n: 5 });
    const c = q.take()!;
    expect(c.n).to.equal(4);
    q.requeue(c);
    expect(q.take()?.n, "the put-back payer first").to.equal(4);
  });

  it("drain answers every waiting job and forgets them; held places stay until released", function () {
    const q = new FairQueue<J>(share());
    q.offer({ owner: o("a", "k", "p"), n: 1 });
    q.offer({ owner: o("b", "k", "p"), n: 2 });
    q.offer({ owner: o("c"), n: 3 });
    const h = q.hold(o("d"));
    expect(q.drain().map((j) => j.n).sort()).to.deep.equal([1, 2, 3]);
    expect([q.waiting, q.length, q.queuedFor(o("a", "k", "p"), "payer"), q.queuedFor(o("c"), "account"), q.queuedFor(o("d"), "account")]).to.deep.equal([0, 1, 0, 0, 1]);
    expect(q.take()).to.equal(undefined);
    if (typeof h !== "string") q.release(h);
    expect(q.length).to.equal(0);
    q.offer({ owner: o("a", "k", "p"), n: 4 });
    expect(takeAll(q)).to.deep.equal([4]);
  });

  it("turns: payers alternate, and within a payer its accounts; an account's next run waits for the payer's other accounts", function () {
    const q = new FairQueue<J>(share());
    let n = 0;
    for (let i = 0; i < 2; i++) {
      q.offer({ owner: o("p1a", "k", "p1"), n: ++n });
      q.offer({ owner: o("p1b", "k", "p1"), n: ++n });
      q.offer({ owner: o("p2a", "k", "p2"), n: ++n });
    }
    // offered: 1 p1a, 2 p1b, 3 p2a, 4 p1a, 5 p1b, 6 p2a
    expect(takeAll(q)).to.deep.equal([1, 3, 2, 6, 4, 5]);
  });

  it("an account whose queue emptied while its payer still waits gets turns again for its next run", function () {
    const q = new FairQueue<J>(share());
    q.offer({ owner: o("a", "k", "p"), n: 1 });
    q.offer({ owner: o("b", "k", "p"), n: 2 });
    q.offer({ owner: o("b", "k", "p"), n: 3 });
    expect(q.take()?.n).to.equal(1); // a emptied; p still waits (b)
    q.offer({ owner: o("a", "k", "p"), n: 4 });
    expect(takeAll(q)).to.deep.equal([2, 4, 3]);
    expect(q.waiting).to.equal(0);
  });

  it("defaults follow the worker count and what is given", function () {
    expect(defaultFairShare(2)).to.deep.equal({ perPayer: 1, perAccount: 1, perKey: 1, queuePerPayer: 64, queuePerAccount: 64, queueTotal: 1024 });
    expect(defaultFairShare(0).perPayer).to.equal(1);
    expect(defaultFairShare(4, { perPayer: 9, perKey: 2, queuePerAccount: 3, queueTotal: 5 })).to.deep.equal({ perPayer: 9, perAccount: 9, perKey: 2, queuePerPayer: 64, queuePerAccount: 3, queueTotal: 5 });
  });
});
