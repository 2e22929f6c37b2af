import v8 from "node:v8";
import vm from "node:vm";
import { expect } from "chai";
import pino from "pino";
import { keccak256, toUtf8Bytes } from "ethers";
import { newAccount, startStack, type Stack } from "./helpers/relayer";
import { cidHash, computeCid } from "../executor/cid";
import { PermissionCache } from "../executor/permissions";
import { hashKey } from "../relayer/http/auth";
import { Lru } from "../protocol/lru";

v8.setFlagsFromString("--expose-gc");
const gc = vm.runInNewContext("gc") as () => void;
const heapMB = () => {
  gc();
  return process.memoryUsage().heapUsed / 1024 / 1024;
};

describe("Lru: bounded by weight, least recently used out first", function () {
  it("evicts the least recently used (a read refreshes), tells onEvict, and keeps nothing heavier than its capacity", function () {
    const evicted: string[] = [];
    const lru = new Lru<string, string>(10, { weigh: (v) => v.length, onEvict: (k) => evicted.push(k) });
    lru.set("a", "aaaa");
    lru.set("b", "bbbb");
    expect(lru.get("a")).to.equal("aaaa"); // b is now the least recently used
    lru.set("c", "cccc"); // 12 > 10: b goes
    expect([evicted, lru.size, lru.weight, lru.has("b")]).to.deep.equal([["b"], 2, 8, false]);
    lru.set("a", "a"); // replacing is not evicting
    lru.set("huge", "x".repeat(11)); // heavier than the capacity: not kept, nothing evicted
    expect([evicted, lru.size, lru.weight, lru.peek("huge")]).to.deep.equal([["b"], 2, 5, undefined]);
    lru.delete("c");
    expect([evicted, lru.size, lru.weight]).to.deep.equal([["b"], 1, 1]);
  });
});

describe("the permission cache: bounded, least recently used dropped first (issue 15, red team round 2)", function () {
  this.timeout(300_000);
  let stack: Stack;
  const caches: AbortController[] = [];
  before(async () => (stack = await startStack()));
  after(async () => {
    for (const c of caches) c.abort();
    await stack?.stop();
  });

  /** A permission cache of its own on the stack's chain (`maxEntries` per map), following the chain. */
  async function cache(maxEntries?: number): Promise<PermissionCache> {
    const ctx = stack.relayer.ctx;
    const c = new PermissionCache(ctx.chain.accountConfig, ctx.chain.provider, pino({ level: "silent" }), 60_000, maxEntries);
    const abort = new AbortController();
    caches.push(abort);
    await c.start(abort.signal);
    return c;
  }

  it("one caller's junk decisions never stop another's from being cached: the least recently used go", async function () {
    const perm = await cache(200);
    const ac = stack.relayer.ctx.chain.accountConfig;
    const who = async (key: string) => ({ keyHash: hashKey(key), ...(await perm.resolve(hashKey(key))) });
    const attacker = await who((await newAccount(stack, "attacker")).apiKey);
    const victim = await who((await newAccount(stack, "victim")).apiKey);
    const cid = keccak256(toUtf8Bytes(await computeCid("async function main() {}")));
    for (let i = 1; i <= 210; i++) await perm.allowed(attacker, cid, `0x${i.toString(16).padStart(40, "0")}`);
    expect(perm.size().decisions).to.equal(200);
    const original = ac.findExecutionGroup;
    let reads = 0;
    (ac as unknown as Record<string, unknown>).findExecutionGroup = (...a: Parameters<typeof original>) => (reads++, original(...a));
    try {
      for (let i = 0; i < 20; i++) await perm.allowed(victim, cid, "0x0000000000000000000000000000000000000000");
    } finally {
      (ac as unknown as Record<string, unknown>).findExecutionGroup = original;
    }
    expect(reads).to.equal(1);
    expect(perm.size()).to.deep.include({ decisions: 200, indexed: 200 + perm.size().keys });
  });

  it("a million distinct keys keep it at its bound (entries, index, heap), and a hot entry stays cached", async function () {
    const perm = await cache(); // the default bound: 100,000 per map
    const heapBefore = heapMB();
    let hotLoads = 0;
    const hot = () => perm.read(1n, "hot", async () => (hotLoads++, "hot"));
    await hot();
    for (let i = 0; i < 1_000_000; i++) {
      await perm.read(BigInt(2 + (i % 5000)), `junk-${i}`, async () => i);
      if (i % 1000 === 0) expect(await hot()).to.equal("hot");
    }
    expect(hotLoads).to.equal(1);
    // Still caching once full: a new entry is kept (and pushes out the coldest).
    let freshLoads = 0;
    for (let i = 0; i < 3; i++) await perm.read(9n, "fresh", async () => (freshLoads++, "fresh"));
    expect(freshLoads).to.equal(1);
    const size = perm.size();
    expect(size).to.deep.include({ reads: 100_000, indexed: 100_000 + size.keys });
    expect(size.accounts).to.be.at.most(5001);
    // 100,000 small entries: tens of MB; a million kept would be ten times that.
    expect(heapMB() - heapBefore).to.be.below(120);
  });
});

describe("hashes of keys and CIDs, remembered (issue 18: a run computed keccak256 three times in JavaScript)", function () {
  it("answer keccak256 of the text, also from memory, for every key and CID, and never confuse two", function () {
    const keys = Array.from({ length: 300 }, (_, i) => `key-${i}-${"é".repeat(i % 5)}`);
    for (let pass = 0; pass < 2; pass++) {
      for (const k of keys) expect(hashKey(k)).to.equal(BigInt(keccak256(toUtf8Bytes(k))));
      for (const k of keys) expect(cidHash(`Qm${k}`)).to.equal(keccak256(toUtf8Bytes(`Qm${k}`)));
    }
  });
});
