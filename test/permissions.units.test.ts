import { expect } from "chai";
import type { Request, Response } from "express";
import type { Logger } from "pino";
import type { JsonRpcProvider } from "ethers";
import type { IAccountConfig } from "../typechain-types";
import { PermissionCache, type Who } from "../executor/permissions";
import { AuthFailureLimit } from "../relayer/http/authFailures";
import { authenticate, authenticateBeforeBody, clientAddress, MAX_KEY_LENGTH, presentedKey, resolveKey, hashKey } from "../relayer/http/auth";
import type { Ctx } from "../relayer/context";
import { AppError } from "../protocol/errors";

/**
 * The permission cache and the key check, each rule on its own, against a chain double that counts
 * its reads and can hold a read open (to race an event or a reset against it). The chain-backed
 * tests (executor.permissions, executor.caches, relayer.unknownKeys) show the same rules through the
 * contract and HTTP; these pin every branch, so that `npm run mutate permissions` has a test per rule.
 */

type Key = { account: bigint; isAccountKey: boolean; active: boolean; expiration: bigint };

/** A deferred: `open()` lets every read waiting on it go on. */
function gate() {
  let open!: () => void;
  const promise = new Promise<void>((r) => (open = r));
  return { promise, open };
}

class FakeChain {
  readonly keys = new Map<bigint, Key>();
  readonly decisions = new Map<string, [boolean, bigint]>();
  readonly calls = { resolve: 0, usage: 0, find: 0, blockNumber: 0, logs: 0 };
  hold?: Promise<void>;
  failResolve = false;
  failBlockNumber = false;
  /** When set, getBlockNumber waits for it (to stop the cache while a poll or its start is under way). */
  holdBlockNumber?: Promise<void>;
  /** Blocks the node answers null for (pruned, or not there yet). */
  readonly nullBlocks = new Set<number>();
  head = 10;
  pendingLogs: { topics: string[] }[] = [];
  /** Logs kept per block: every read of a range that holds the block gets them (pendingLogs are given once). */
  readonly blockLogs = new Map<number, { topics: string[] }[]>();
  /** When set, the next getLogs waits for it (once). */
  holdLogs?: Promise<void>;
  lastLogRange?: [number, number];
  readonly timestamps = new Map<number, number>();

  readonly accountConfig = {
    getAddress: async () => "0x00000000000000000000000000000000000000c0",
    resolveApiKey: async (h: bigint): Promise<[bigint, boolean, boolean]> => {
      this.calls.resolve++;
      await this.hold;
      if (this.failResolve) throw new Error("rpc down");
      const k = this.keys.get(h);
      return k ? [k.account, k.isAccountKey, k.active] : [0n, false, false];
    },
    getUsageApiKey: async (h: bigint) => {
      this.calls.usage++;
      return { expiration: this.keys.get(h)!.expiration };
    },
    findExecutionGroup: async (h: bigint, cid: string, pkp: string): Promise<[boolean, bigint]> => {
      this.calls.find++;
      await this.hold;
      return this.decisions.get(`${h}:${cid}:${pkp.toLowerCase()}`) ?? [false, 0n];
    },
  } as unknown as IAccountConfig;

  readonly provider = {
    getBlockNumber: async () => {
      this.calls.blockNumber++;
      await this.holdBlockNumber;
      if (this.failBlockNumber) throw new Error("rpc down");
      return this.head;
    },
    getLogs: async ({ fromBlock, toBlock }: { fromBlock: number; toBlock: number }) => {
      this.calls.logs++;
      this.lastLogRange = [fromBlock, toBlock];
      const hold = this.holdLogs;
      this.holdLogs = undefined;
      await hold;
      const kept = [...this.blockLogs].filter(([n]) => n >= fromBlock && n <= toBlock).flatMap(([, logs]) => logs);
      return [...kept, ...this.pendingLogs.splice(0)];
    },
    getBlock: async (n: number) => (this.nullBlocks.has(n) ? null : { timestamp: this.timestamps.get(n) ?? 0 }),
  } as unknown as JsonRpcProvider;
}

const topic = (n: bigint) => `0x${n.toString(16).padStart(64, "0")}`;
const EVENT = topic(0xe7e7n);
const A = 0xaaaan;
const B = 0xbbbbn;
const K1 = 0x1001n; // A's account key
const K2 = 0x1002n; // a usage key of A
const K3 = 0x2001n; // B's account key
const CID = topic(0xc1dn);
const PKP = "0x00000000000000000000000000000000000ABCDE";
const who = (keyHash: bigint, accountHash: bigint, isAccountKey = true): Who => ({ keyHash, accountHash, isAccountKey });
const now = () => Math.floor(Date.now() / 1000);

function silentLogger(warnings: string[] = []): Logger {
  return { warn: (_obj: unknown, msg: string) => warnings.push(msg), info() {}, error() {}, debug() {} } as unknown as Logger;
}

describe("PermissionCache, rule by rule (chain double)", function () {
  let chain: FakeChain;
  const aborts: AbortController[] = [];

  beforeEach(() => {
    chain = new FakeChain();
    chain.keys.set(K1, { account: A, isAccountKey: true, active: true, expiration: 0n });
    chain.keys.set(K2, { account: A, isAccountKey: false, active: true, expiration: BigInt(now() + 1000) });
    chain.keys.set(K3, { account: B, isAccountKey: true, active: true, expiration: 0n });
  });
  afterEach(() => {
    for (const a of aborts.splice(0)) a.abort();
  });

  function make(opts: { pollMs?: number; maxEntries?: number; unknownKeyTtlMs?: number; warnings?: string[] } = {}) {
    return new PermissionCache(chain.accountConfig, chain.provider, silentLogger(opts.warnings), opts.pollMs ?? 3_600_000, opts.maxEntries, opts.unknownKeyTtlMs);
  }
  async function started(opts: Parameters<typeof make>[0] = {}) {
    const c = make(opts);
    const abort = new AbortController();
    aborts.push(abort);
    await c.start(abort.signal);
    return c;
  }

  it("caches nothing before it follows the chain: every resolve, decision and view reads the chain", async function () {
    const c = make();
    expect(await c.resolve(K1)).to.deep.equal({ accountHash: A, isAccountKey: true, active: true });
    await c.resolve(K1);
    expect(c.cached(K1)).to.equal(undefined);
    await c.allowed(who(K1, A), CID, PKP);
    await c.allowed(who(K1, A), CID, PKP);
    let loads = 0;
    await c.read(A, "v", async () => ++loads);
    await c.read(A, "v", async () => ++loads);
    expect([chain.calls.resolve, chain.calls.find, loads]).to.deep.equal([2, 2, 2]);
    expect(c.size()).to.deep.equal({ decisions: 0, keys: 0, reads: 0, unknownKeys: 0, indexed: 0, accounts: 0 });
  });

  it("an account key is read once (without a usage-key read) and then answered from memory", async function () {
    const c = await started();
    expect(await c.resolve(K1)).to.deep.equal({ accountHash: A, isAccountKey: true, active: true });
    expect(await c.resolve(K1)).to.deep.equal({ accountHash: A, isAccountKey: true, active: true });
    expect(c.cached(K1)).to.deep.equal({ accountHash: A, isAccountKey: true, active: true });
    expect([chain.calls.resolve, chain.calls.usage]).to.deep.equal([1, 0]);
    expect(c.size()).to.deep.include({ keys: 1, indexed: 1, accounts: 1 });
  });

  it("a usage key's expiry is judged from memory by the later of the clock and the newest block, to the second", async function () {
    const c = await started();
    const expiration = Number(chain.keys.get(K2)!.expiration);
    expect(await c.resolve(K2)).to.deep.equal({ accountHash: A, isAccountKey: false, active: true });
    expect(chain.calls.usage).to.equal(1);
    chain.decisions.set(`${K2}:${CID}:${PKP.toLowerCase()}`, [true, 3n]);
    expect(await c.allowed(who(K2, A, false), CID, PKP)).to.equal(true);
    const block = (n: number, t: number) => {
      chain.head = n;
      chain.timestamps.set(n, t);
      return c.sync();
    };
    await block(11, expiration - 1); // one second before: still active
    expect(c.now()).to.equal(BigInt(expiration - 1));
    expect(c.cached(K2)).to.deep.equal({ accountHash: A, isAccountKey: false, active: true });
    expect(await c.allowed(who(K2, A, false), CID, PKP)).to.equal(true);
    await block(12, expiration); // the block that reaches it: expired, without asking the chain
    expect(c.cached(K2)).to.deep.equal({ accountHash: A, isAccountKey: false, active: false });
    const finds = chain.calls.find;
    expect(await c.allowed(who(K2, A, false), CID, PKP)).to.equal(false);
    expect(chain.calls.find).to.equal(finds);
    await block(13, expiration - 500); // an older block never winds the time back
    expect(c.now()).to.equal(BigInt(expiration));
    // expiration 0: never expires, however late the chain
    await block(14, 2 ** 40);
    expect(c.cached(K1)).to.equal(undefined); // not read yet
    await c.resolve(K1);
    expect(c.cached(K1)).to.deep.equal({ accountHash: A, isAccountKey: true, active: true });
  });

  it("an unknown or inactive key is remembered for unknownKeyTtlMs, with its answer, and forgotten when an event names it", async function () {
    const c = await started({ unknownKeyTtlMs: 60_000 });
    const unknown = 0x9999n;
    expect(await c.resolve(unknown)).to.deep.equal({ accountHash: 0n, isAccountKey: false, active: false });
    expect(await c.resolve(unknown)).to.deep.equal({ accountHash: 0n, isAccountKey: false, active: false });
    expect(chain.calls.resolve).to.equal(1);
    expect(c.size().unknownKeys).to.equal(1);
    // named in topic 2 (a usage key set): asked again
    c.seen([EVENT, topic(A), topic(unknown)]);
    await c.resolve(unknown);
    expect(chain.calls.resolve).to.equal(2);
    // named in topic 1 (an account created for it): asked again
    c.seen([EVENT, topic(unknown)]);
    await c.resolve(unknown);
    expect(chain.calls.resolve).to.equal(3);
    // topic 3 names nothing
    c.seen([EVENT, topic(B), topic(1n), topic(unknown)]);
    await c.resolve(unknown);
    expect(chain.calls.resolve).to.equal(3);
    // an inactive key keeps its account
    chain.keys.set(0x7777n, { account: B, isAccountKey: false, active: false, expiration: 1n });
    expect(await c.resolve(0x7777n)).to.deep.equal({ accountHash: B, isAccountKey: false, active: false });
    expect(c.cached(0x7777n)).to.deep.equal({ accountHash: B, isAccountKey: false, active: false });
    expect(chain.calls.usage).to.equal(0);
  });

  it("an unknown key is remembered no longer than unknownKeyTtlMs, and not at all with 0", async function () {
    const short = await started({ unknownKeyTtlMs: 40 });
    await short.resolve(0x9999n);
    await short.resolve(0x9999n);
    expect(chain.calls.resolve).to.equal(1);
    await new Promise((r) => setTimeout(r, 60));
    await short.resolve(0x9999n);
    expect(chain.calls.resolve).to.equal(2);
    const never = await started({ unknownKeyTtlMs: 0 });
    await never.resolve(0x8888n);
    await never.resolve(0x8888n);
    expect(chain.calls.resolve).to.equal(4);
    expect(never.size().unknownKeys).to.equal(0);
  });

  it("a refusal read while an event named the key, or while the cache was reset, is not remembered", async function () {
    const c = await started();
    for (const interrupt of [() => c.seen([EVENT, topic(A), topic(0x9999n)]), () => c.clear()]) {
      const g = gate();
      chain.hold = g.promise;
      const reading = c.resolve(0x9999n);
      await Promise.resolve();
      interrupt();
      g.open();
      expect((await reading).accountHash).to.equal(0n);
      chain.hold = undefined;
      const before = chain.calls.resolve;
      await c.resolve(0x9999n);
      expect(chain.calls.resolve, "asked the chain again").to.equal(before + 1);
      c.seen([EVENT, topic(0x9999n)]); // forget it for the next round
    }
    // without an interruption the refusal is remembered (the control)
    await c.resolve(0x6666n);
    await c.resolve(0x6666n);
    expect(c.cached(0x6666n)).to.deep.equal({ accountHash: 0n, isAccountKey: false, active: false });
  });

  it("a key read while any account was invalidated is not cached (its answer may be stale)", async function () {
    const c = await started();
    const g = gate();
    chain.hold = g.promise;
    const reading = c.resolve(K1);
    await Promise.resolve();
    c.invalidate(B);
    g.open();
    expect((await reading).active).to.equal(true);
    chain.hold = undefined;
    expect(c.cached(K1)).to.equal(undefined);
    await c.resolve(K1);
    expect(c.cached(K1)).to.deep.equal({ accountHash: A, isAccountKey: true, active: true });
  });

  it("concurrent resolves of one key share one read; beforeRead runs once, only when a read starts, and may refuse it", async function () {
    const c = await started();
    let befores = 0;
    const g = gate();
    chain.hold = g.promise;
    const all = Promise.all([1, 2, 3].map(() => c.resolve(K1, () => befores++)));
    await Promise.resolve();
    g.open();
    expect((await all).map((r) => r.accountHash)).to.deep.equal([A, A, A]);
    expect([chain.calls.resolve, befores]).to.deep.equal([1, 1]);
    await c.resolve(K1, () => befores++); // from memory: no read, no beforeRead
    expect(befores).to.equal(1);
    chain.hold = undefined;
    const refusal = new Error("budget spent");
    let caught: unknown;
    await c.resolve(K3, () => {
      throw refusal;
    }).catch((e) => (caught = e));
    expect(caught).to.equal(refusal);
    expect(chain.calls.resolve, "a refused read is not made").to.equal(1);
    expect((await c.resolve(K3)).accountHash).to.equal(B);
    expect(chain.calls.resolve).to.equal(2);
  });

  it("a read that failed is not shared with later callers: the next one reads again", async function () {
    const c = await started();
    chain.failResolve = true;
    let caught: unknown;
    await c.resolve(K1).catch((e) => (caught = e));
    expect((caught as Error).message).to.equal("rpc down");
    chain.failResolve = false;
    expect((await c.resolve(K1)).accountHash).to.equal(A);
    expect(chain.calls.resolve).to.equal(2);
  });

  it("invalidate and an account's event drop that account's keys, decisions and views, and only that account's", async function () {
    const c = await started();
    chain.decisions.set(`${K1}:${CID}:${PKP.toLowerCase()}`, [true, 1n]);
    chain.decisions.set(`${K3}:${CID}:${PKP.toLowerCase()}`, [true, 2n]);
    const loads = { a: 0, b: 0 };
    const fill = async () => {
      await c.resolve(K1);
      await c.resolve(K3);
      await c.allowed(who(K1, A), CID, PKP);
      await c.allowed(who(K3, B), CID, PKP);
      await c.read(A, "page", async () => ++loads.a);
      await c.read(B, "page", async () => ++loads.b);
    };
    await fill();
    expect(c.size()).to.deep.equal({ decisions: 2, keys: 2, reads: 2, unknownKeys: 0, indexed: 6, accounts: 2 });
    for (const drop of [() => c.invalidate(A), () => c.seen([EVENT, topic(A)])]) {
      const calls = { ...chain.calls };
      const before = { ...loads };
      drop();
      expect(c.size()).to.deep.include({ decisions: 1, keys: 1, reads: 1, indexed: 3, accounts: 1 });
      expect(c.cached(K1)).to.equal(undefined);
      expect(c.cached(K3)).to.deep.equal({ accountHash: B, isAccountKey: true, active: true });
      await fill();
      expect([chain.calls.resolve - calls.resolve, chain.calls.find - calls.find, loads.a - before.a, loads.b - before.b]).to.deep.equal([1, 1, 1, 0]);
    }
    c.seen([EVENT]); // no account topic: nothing dropped
    c.invalidate(0x4242n); // an account with nothing cached
    expect(c.size()).to.deep.include({ decisions: 2, keys: 2, reads: 2, indexed: 6, accounts: 2 });
  });

  it("allowed: one chain read per (key, CID, wallet in any case), the chain's answer kept, only beside the key's cached expiry", async function () {
    const c = await started();
    chain.decisions.set(`${K1}:${CID}:${PKP.toLowerCase()}`, [true, 1n]);
    // key not cached yet: the decision is asked each time
    expect(await c.allowed(who(K1, A), CID, PKP)).to.equal(true);
    expect(await c.allowed(who(K1, A), CID, PKP)).to.equal(true);
    expect(chain.calls.find).to.equal(2);
    await c.resolve(K1);
    expect(await c.allowed(who(K1, A), CID, PKP)).to.equal(true);
    expect(await c.allowed(who(K1, A), CID, PKP.toLowerCase())).to.equal(true);
    expect(chain.calls.find, "the decision read beside no cached key was kept; now it is used").to.equal(2);
    // a refusal is kept too, and another CID is its own question
    const other = topic(0xc2dn);
    expect(await c.allowed(who(K1, A), other, PKP)).to.equal(false);
    expect(await c.allowed(who(K1, A), other, PKP)).to.equal(false);
    expect(chain.calls.find).to.equal(3);
    // a decision read while the account was invalidated is not kept
    const g = gate();
    chain.hold = g.promise;
    const third = topic(0xc3dn);
    const reading = c.allowed(who(K1, A), third, PKP);
    await Promise.resolve();
    c.invalidate(B);
    g.open();
    await reading;
    chain.hold = undefined;
    await c.allowed(who(K1, A), third, PKP);
    expect(chain.calls.find).to.equal(5);
  });

  it("read: a view per account and name, kept until that account's event; not kept when an invalidation raced it", async function () {
    const c = await started();
    let loads = 0;
    expect(await c.read(A, "x", async () => `v${++loads}`)).to.equal("v1");
    expect(await c.read(A, "x", async () => `v${++loads}`)).to.equal("v1");
    expect(await c.read(A, "y", async () => `v${++loads}`)).to.equal("v2");
    expect(await c.read(B, "x", async () => `v${++loads}`)).to.equal("v3");
    const racing = c.read(A, "z", async () => {
      c.invalidate(B);
      return `v${++loads}`;
    });
    expect(await racing).to.equal("v4");
    expect(await c.read(A, "z", async () => `v${++loads}`)).to.equal("v5");
  });

  it("sync: no new block reads no logs; new blocks' logs drop what they name; a chain that went back drops everything", async function () {
    const c = await started({ unknownKeyTtlMs: 60_000 });
    await c.resolve(K1);
    await c.resolve(K3);
    await c.resolve(0x9999n);
    await c.sync();
    expect(chain.calls.logs).to.equal(0);
    chain.head = 13;
    chain.pendingLogs.push({ topics: [EVENT, topic(A)] });
    await c.sync();
    expect(chain.lastLogRange).to.deep.equal([11, 13]);
    expect([c.cached(K1), c.cached(K3)?.accountHash]).to.deep.equal([undefined, B]);
    chain.head = 15;
    await c.sync();
    expect(chain.lastLogRange).to.deep.equal([14, 15]);
    chain.head = 5; // reset or reorg
    await c.sync();
    expect([c.cached(K3), c.cached(0x9999n)]).to.deep.equal([undefined, undefined]);
    expect(chain.calls.logs).to.equal(2);
    chain.head = 6;
    await c.sync();
    expect(chain.lastLogRange).to.deep.equal([6, 6]);
  });

  it("sync: one at a time; a sync called while another reads the logs waits for it, so the slower one cannot drop, after the other synced, what lookups cached since (CI finding: a test's sync raced the poller's)", async function () {
    const c = await started();
    chain.decisions.set(`${K1}:${CID}:${PKP.toLowerCase()}`, [true, 1n]);
    chain.head = 11;
    chain.blockLogs.set(11, [{ topics: [EVENT, topic(A)] }]);
    const g = gate();
    chain.holdLogs = g.promise; // the first sync (the poller's) waits at its logs
    const first = c.sync();
    const second = c.sync(); // a caller's: events up to now seen when it answers
    setTimeout(() => g.open(), 30);
    await second;
    await c.resolve(K1);
    expect(await c.allowed(who(K1, A), CID, PKP)).to.equal(true);
    const reads = { ...chain.calls };
    await first;
    await c.resolve(K1);
    expect(await c.allowed(who(K1, A), CID, PKP)).to.equal(true);
    expect([chain.calls.resolve, chain.calls.find], "the key and decision cached after the caller's sync stay cached").to.deep.equal([reads.resolve, reads.find]);
    expect(chain.calls.logs, "block 11's logs read once: the second sync started from the first one's cursor").to.equal(1);
  });

  it("a failed sync drops everything and says so; aborting stops following and caching", async function () {
    const warnings: string[] = [];
    const c = make({ pollMs: 5, warnings });
    const abort = new AbortController();
    await c.start(abort.signal);
    await c.resolve(K1);
    expect(c.cached(K1)?.accountHash).to.equal(A);
    chain.failBlockNumber = true;
    await new Promise((r) => setTimeout(r, 40));
    expect(warnings).to.include("permission cache: sync failed, reading from the chain");
    expect(c.cached(K1)).to.equal(undefined);
    chain.failBlockNumber = false;
    await new Promise((r) => setTimeout(r, 30)); // following again
    await c.resolve(K1);
    expect(c.cached(K1)?.accountHash).to.equal(A);
    abort.abort();
    const polls = chain.calls.blockNumber;
    await new Promise((r) => setTimeout(r, 40));
    expect(chain.calls.blockNumber, "no poll after abort").to.equal(polls);
    expect(c.cached(K1), "nothing answered from memory once stopped").to.equal(undefined);
    await c.resolve(K3);
    await c.resolve(K3);
    expect(c.cached(K3)).to.equal(undefined);
  });

  it("follows the chain by polling, again and again, and stops even when stopped during a poll or during its start", async function () {
    const c = make({ pollMs: 5 });
    const abort = new AbortController();
    aborts.push(abort);
    await c.start(abort.signal);
    for (const block of [11, 12]) {
      await c.resolve(K1);
      chain.head = block;
      chain.pendingLogs.push({ topics: [EVENT, topic(A)] });
      await new Promise((r) => setTimeout(r, 40));
      expect(c.cached(K1), `the event of block ${block} was seen by a poll`).to.equal(undefined);
    }
    // stopped while a poll waits for the chain: no poll after it
    const g = gate();
    chain.holdBlockNumber = g.promise;
    await new Promise((r) => setTimeout(r, 20));
    abort.abort();
    g.open();
    chain.holdBlockNumber = undefined;
    await new Promise((r) => setTimeout(r, 10));
    const polls = chain.calls.blockNumber;
    await new Promise((r) => setTimeout(r, 40));
    expect(chain.calls.blockNumber, "no poll after a stop during a poll").to.equal(polls);
    // stopped while it starts: it never polls, and caches nothing
    const late = make({ pollMs: 5 });
    const lateAbort = new AbortController();
    const g2 = gate();
    chain.holdBlockNumber = g2.promise;
    const starting = late.start(lateAbort.signal);
    await Promise.resolve();
    lateAbort.abort();
    g2.open();
    await starting;
    chain.holdBlockNumber = undefined;
    const before = chain.calls.blockNumber;
    await new Promise((r) => setTimeout(r, 40));
    expect(chain.calls.blockNumber, "no poll after a stop during the start").to.equal(before);
    await late.resolve(K1);
    expect(late.cached(K1)).to.equal(undefined);
  });

  it("a chain at block 0 is followed; a block the node answers null for changes no time and breaks no sync", async function () {
    chain.head = 0;
    const c = await started();
    await c.resolve(K1);
    expect(c.cached(K1)?.accountHash, "cached from block 0").to.equal(A);
    const t = c.now();
    chain.head = 1;
    chain.nullBlocks.add(1);
    await c.sync();
    expect(c.now() >= t).to.equal(true);
    expect(c.cached(K1)?.accountHash, "nothing dropped").to.equal(A);
  });

  it("a key the chain answers without an account is refused and remembered as unknown, even if marked active", async function () {
    const c = await started({ unknownKeyTtlMs: 60_000 });
    chain.keys.set(0x5555n, { account: 0n, isAccountKey: true, active: true, expiration: 0n });
    expect(await c.resolve(0x5555n)).to.deep.equal({ accountHash: 0n, isAccountKey: true, active: true });
    expect(c.size()).to.deep.include({ keys: 0, unknownKeys: 1 });
    expect(chain.calls.usage).to.equal(0);
  });

  it("a decision not cached yet is the chain's (which judges expiry by block time); a cached one is refused once the key expired", async function () {
    const c = await started();
    chain.keys.get(K2)!.expiration = BigInt(now() - 5); // past by this machine's clock, not yet by the chain's
    await c.resolve(K2);
    expect(c.cached(K2)?.active, "expired by the clock").to.equal(false);
    chain.decisions.set(`${K2}:${CID}:${PKP.toLowerCase()}`, [true, 3n]);
    expect(await c.allowed(who(K2, A, false), CID, PKP)).to.equal(true);
    expect(chain.calls.find).to.equal(1);
    expect(await c.allowed(who(K2, A, false), CID, PKP), "now from memory: refused").to.equal(false);
    expect(chain.calls.find).to.equal(1);
  });

  it("bounded: past maxEntries the least recently used goes and its account's index forgets it; 0 keeps nothing", async function () {
    const c = await started({ maxEntries: 2 });
    chain.keys.set(0x1003n, { account: A, isAccountKey: false, active: true, expiration: 0n });
    await c.resolve(K1);
    await c.resolve(K3);
    await c.resolve(0x1003n); // K1 goes
    expect(c.size()).to.deep.include({ keys: 2, indexed: 2, accounts: 2 });
    expect(c.cached(K1)).to.equal(undefined);
    await c.resolve(K1); // K3 goes: B has nothing left
    expect(c.size()).to.deep.include({ keys: 2, indexed: 2, accounts: 1 });
    const none = await started({ maxEntries: 0 });
    await none.resolve(K1);
    await none.read(A, "x", async () => 1);
    expect(none.size()).to.deep.equal({ decisions: 0, keys: 0, reads: 0, unknownKeys: 0, indexed: 0, accounts: 0 });
  });
});

/** A request double: headers (lower-case names), the client address and the method. */
function req(headers: Record<string, string>, ip = "203.0.113.7", method = "POST"): Request {
  return { get: (n: string) => headers[n.toLowerCase()], ip, method } as unknown as Request;
}

describe("the key check (relayer/http/auth.ts), rule by rule", function () {
  let chain: FakeChain;
  let ctx: Ctx;
  const aborts: AbortController[] = [];
  const ACCOUNT_KEY = "account-key";
  const USAGE_KEY = "usage-key";

  beforeEach(async () => {
    chain = new FakeChain();
    chain.keys.set(hashKey(ACCOUNT_KEY), { account: A, isAccountKey: true, active: true, expiration: 0n });
    chain.keys.set(hashKey(USAGE_KEY), { account: A, isAccountKey: false, active: true, expiration: 0n });
    const permissions = new PermissionCache(chain.accountConfig, chain.provider, silentLogger(), 3_600_000);
    const abort = new AbortController();
    aborts.push(abort);
    await permissions.start(abort.signal);
    ctx = { executor: { permissions }, authFailures: new AuthFailureLimit(1) } as unknown as Ctx;
  });
  afterEach(() => {
    for (const a of aborts.splice(0)) a.abort();
  });

  async function refusal(p: Promise<unknown>): Promise<AppError> {
    try {
      await p;
    } catch (e) {
      expect(e).to.be.instanceOf(AppError);
      return e as AppError;
    }
    expect.fail("not refused");
  }

  it("presentedKey: X-Api-Key first (trimmed), else Authorization: Bearer in any case, else none", function () {
    expect(presentedKey(req({ "x-api-key": "  k1  ", authorization: "Bearer k2" }))).to.equal("k1");
    expect(presentedKey(req({ authorization: "Bearer   k2 " }))).to.equal("k2");
    expect(presentedKey(req({ authorization: "bEaReR k3" }))).to.equal("k3");
    expect(presentedKey(req({ authorization: "Basic k4" }))).to.equal(undefined);
    expect(presentedKey(req({ authorization: "xBearer k5" }))).to.equal(undefined);
    expect(presentedKey(req({ authorization: "Bearer" }))).to.equal(undefined);
    expect(presentedKey(req({}))).to.equal(undefined);
    expect(presentedKey(req({ "x-api-key": "" , authorization: "Bearer k6" }))).to.equal("k6");
  });

  it("clientAddress: one form per address (IPv4-mapped IPv6 as IPv4); no address is the empty one", function () {
    expect(clientAddress({ get: () => undefined, ip: undefined } as unknown as Request)).to.equal("");
    expect(clientAddress(req({}, "::ffff:203.0.113.7"))).to.equal("203.0.113.7");
    expect(clientAddress(req({}, "2001:db8:0:0:0:0:0:1"))).to.equal("2001:db8::1");
  });

  it("authenticate: the account key passes both levels; a usage key passes 'key' and gets 403 on 'account'", async function () {
    for (const need of ["key", "account"] as const) {
      expect(await authenticate(ctx, req({ "x-api-key": ACCOUNT_KEY }), need)).to.deep.equal({ keyHash: hashKey(ACCOUNT_KEY), accountHash: A, isAccountKey: true });
    }
    expect(await authenticate(ctx, req({ authorization: `Bearer ${USAGE_KEY}` }), "key")).to.deep.equal({ keyHash: hashKey(USAGE_KEY), accountHash: A, isAccountKey: false });
    const e = await refusal(authenticate(ctx, req({ "x-api-key": USAGE_KEY }), "account"));
    expect([e.status, e.code]).to.deep.equal([403, "owner_only"]);
  });

  it("authenticate: no key, a key over MAX_KEY_LENGTH (no chain read), an unknown, an inactive or an account-less key are 401", async function () {
    let e = await refusal(authenticate(ctx, req({}), "key"));
    expect([e.status, e.code, e.message]).to.deep.equal([401, "invalid_api_key", "a valid API key is required (X-Api-Key or Authorization: Bearer)"]);
    e = await refusal(authenticate(ctx, req({ "x-api-key": "k".repeat(MAX_KEY_LENGTH + 1) }), "key"));
    expect([e.status, e.message]).to.deep.equal([401, "the API key is malformed (too long)"]);
    expect(chain.calls.resolve).to.equal(0);
    const longest = "k".repeat(MAX_KEY_LENGTH);
    chain.keys.set(hashKey(longest), { account: B, isAccountKey: true, active: true, expiration: 0n });
    expect((await authenticate(ctx, req({ "x-api-key": longest }), "key")).accountHash).to.equal(B);
    chain.keys.set(hashKey("inactive"), { account: A, isAccountKey: false, active: false, expiration: 1n });
    chain.keys.set(hashKey("no-account"), { account: 0n, isAccountKey: true, active: true, expiration: 0n });
    for (const [key, client] of [["unknown", "198.51.100.1"], ["inactive", "198.51.100.2"], ["no-account", "198.51.100.3"]]) {
      e = await refusal(authenticate(ctx, req({ "x-api-key": key }, client), "key"));
      expect([e.status, e.code, e.message], key).to.deep.equal([401, "invalid_api_key", "this API key is unknown, revoked or expired"]);
    }
  });

  it("resolveKey: a chain lookup is counted against the client (429 past the budget, before the read); a good key is taken back", async function () {
    // budget 1 per client: a good key's lookup does not use it up
    expect((await resolveKey(ctx, req({}), ACCOUNT_KEY)).active).to.equal(true);
    expect((await resolveKey(ctx, req({}), "bad-1")).accountHash).to.equal(0n);
    const reads = chain.calls.resolve;
    const e = await refusal(resolveKey(ctx, req({}), "bad-2"));
    expect([e.status, e.code]).to.deep.equal([429, "rate_limited"]);
    expect(chain.calls.resolve, "refused before the read").to.equal(reads);
    // the same client in its IPv4-mapped form shares the budget
    expect((await refusal(resolveKey(ctx, req({}, "::ffff:203.0.113.7"), "bad-3"))).status).to.equal(429);
    // a key refused from memory costs nothing and is answered 401, not 429
    expect((await resolveKey(ctx, req({}), "bad-1")).accountHash).to.equal(0n);
    // a key that proved good passes even past the budget (the cache dropped it on an event of its account)
    ctx.executor.permissions.invalidate(A);
    expect((await resolveKey(ctx, req({}), ACCOUNT_KEY)).active).to.equal(true);
    expect((await refusal(resolveKey(ctx, req({}), USAGE_KEY))).status, "a key never proved good needs the budget").to.equal(429);
    // another client: its good key's lookup is counted, then taken back, so one bad key still fits
    const other = "198.51.100.50";
    expect((await resolveKey(ctx, req({}, other), USAGE_KEY)).active).to.equal(true);
    expect((await resolveKey(ctx, req({}, other), "bad-4")).accountHash).to.equal(0n);
    expect((await refusal(resolveKey(ctx, req({}, other), "bad-5"))).status).to.equal(429);
    // a good key answered from memory was never counted, so it takes nothing back from the budget
    const third = "198.51.100.70";
    await resolveKey(ctx, req({}, third), ACCOUNT_KEY); // cached since the start of this test
    expect((await resolveKey(ctx, req({}, third), "bad-6")).accountHash).to.equal(0n);
    await resolveKey(ctx, req({}, third), ACCOUNT_KEY);
    await resolveKey(ctx, req({}, third), ACCOUNT_KEY);
    expect((await refusal(resolveKey(ctx, req({}, third), "bad-7"))).status, "the budget is not refilled by good keys").to.equal(429);
    // an inactive key, or one without an account, did not prove good: its lookup stays counted
    chain.keys.set(hashKey("inactive"), { account: A, isAccountKey: false, active: false, expiration: 1n });
    chain.keys.set(hashKey("no-account"), { account: 0n, isAccountKey: true, active: true, expiration: 0n });
    for (const [key, client] of [["inactive", "198.51.100.60"], ["no-account", "198.51.100.61"]]) {
      expect((await resolveKey(ctx, req({}, client), key)).active, key).to.equal(key === "no-account");
      expect((await refusal(resolveKey(ctx, req({}, client), `${key}-then-unknown`))).status, key).to.equal(429);
    }
  });

  it("authenticateBeforeBody: POST is authenticated before the body (res.locals.auth), other methods pass untouched", async function () {
    const mw = authenticateBeforeBody(ctx);
    const run = (r: Request) =>
      new Promise<{ arg: unknown; locals: Record<string, unknown> }>((resolve) => {
        const res = { locals: {} as Record<string, unknown> } as unknown as Response;
        mw(r, res, (arg?: unknown) => resolve({ arg, locals: res.locals }));
      });
    const get = await run(req({ "x-api-key": "unknown" }, "203.0.113.9", "GET"));
    expect([get.arg, get.locals, chain.calls.resolve]).to.deep.equal([undefined, {}, 0]);
    const ok = await run(req({ "x-api-key": USAGE_KEY }));
    expect([ok.arg, ok.locals]).to.deep.equal([undefined, { auth: { keyHash: hashKey(USAGE_KEY), accountHash: A, isAccountKey: false } }]);
    const bad = await run(req({ "x-api-key": "unknown" }));
    expect((bad.arg as AppError).status).to.equal(401);
    expect(bad.locals).to.deep.equal({});
  });
});
