/**
 * BlockWatch (relayer/chain/blockWatch.ts): the payers waiting for receipts share one block-number
 * poll, each woken once a block above the one it saw comes (or at its own deadline, or when the node
 * fails a poll), and nothing polls while nobody waits.
 */
import { expect } from "chai";
import { BlockWatch } from "../relayer/chain/blockWatch";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("BlockWatch: one head poll for every waiting payer", function () {
  it("20 waiters cost one eth_blockNumber a poll; each wakes once a block above its own comes", async function () {
    let head = 5;
    let calls = 0;
    const watch = new BlockWatch({ getBlockNumber: async () => (calls++, head) }, 20);
    const woke: number[] = [];
    const waiting = Array.from({ length: 20 }, (_, i) => watch.next(i < 10 ? 5 : 6, 10_000).then(() => woke.push(i)));
    await sleep(110); // ~5 polls, head still 5: nobody wakes
    expect(woke).to.deep.equal([]);
    expect(calls, "one poll per interval for all 20").to.be.within(2, 7);
    head = 6;
    await sleep(60);
    expect(woke.sort((a, b) => a - b), "those that had seen 5").to.deep.equal([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    head = 7;
    await Promise.all(waiting);
    expect(woke).to.have.length(20);
    const after = calls;
    await sleep(80);
    expect(calls, "no poll while nobody waits").to.equal(after);
    await watch.next(6, 10_000); // a block above 6 was seen already: at once
    expect(calls).to.equal(after);
  });

  it("a waiter wakes at its deadline with no new block, and at the next poll when the node fails it", async function () {
    let fail = false;
    const watch = new BlockWatch({ getBlockNumber: async () => { if (fail) throw new Error("down"); return 1; } }, 20);
    const t0 = Date.now();
    await watch.next(1, 60);
    expect(Date.now() - t0).to.be.within(55, 1000);
    fail = true;
    const t1 = Date.now();
    await watch.next(1, 10_000);
    expect(Date.now() - t1, "woken by the failed poll, to read its receipt itself").to.be.below(1000);
  });
});
