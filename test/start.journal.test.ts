import { expect } from "chai";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import hre from "hardhat";
import { Transaction, Wallet, HDNodeWallet, keccak256 } from "ethers";
import type { HardhatNetworkConfig, EthereumProvider } from "hardhat/types";
import { frame, JournalError, readJournal } from "../scripts/start/journal";
import { freshHre, hardhatWallet as wallet } from "./helpers/freshChain";
import { journalPath, openDurableChain, type DurableChain } from "../scripts/start/chain";
import { checkContractsUnchanged } from "../scripts/start/dataDir";
import type { DeploymentRecord, JournalRecord } from "../scripts/start/records";

/** Init code of a contract whose runtime code answers 42 to any call. */
const ANSWER_42 = "0x600a600c600039600a6000f3602a60005260206000f3";
/** Init code that reverts: its creation fails, mined with status 0. */
const REVERTS = "0x60006000fd";
const DEPLOYMENT: DeploymentRecord = {
  k: "deployment",
  deployment: { chainId: 31337, accountConfig: "0x0000000000000000000000000000000000000001", appAuth: "0x0000000000000000000000000000000000000002", owner: "0x0000000000000000000000000000000000000003", adminApiPayer: "0x0000000000000000000000000000000000000003", apiPayers: [], deployedAtBlock: 0 },
  codeHashes: {},
};

describe("npm start's chain journal (scripts/start)", function () {
  this.timeout(120_000);
  let dir: string;
  const open: DurableChain[] = [];
  const lines: string[] = [];
  const log = (l: string) => void lines.push(l);
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "vesta-journal-"));
    lines.length = 0;
  });
  afterEach(async () => {
    for (const c of open.splice(0)) await c.close().catch(() => undefined);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  /** Opens a durable chain on `dir` with a fresh node; returns it and its (wrapped) provider. */
  async function start(over: Partial<HardhatNetworkConfig> = {}) {
    const h = freshHre(over);
    const chain = await openDurableChain(h, dir, log);
    open.push(chain);
    const p = h.network.provider as EthereumProvider;
    return { chain, p, rpc: (method: string, params: unknown[] = []) => p.request({ method, params }) as Promise<any> };
  }
  const records = () => readJournal(journalPath(dir)).records as JournalRecord[];
  /** As if the process holding the data directory had been killed: its lock names a process that is gone. */
  const killed = () => fs.writeFileSync(path.join(path.dirname(journalPath(dir)), "lock"), "999999999");
  async function signed(rpc: (m: string, p?: unknown[]) => Promise<any>, from: Wallet | HDNodeWallet, to: string, value: bigint): Promise<string> {
    const nonce = Number(await rpc("eth_getTransactionCount", [from.address, "pending"]));
    return from.signTransaction(Transaction.from({ type: 2, chainId: 31337, nonce, to, value, gasLimit: 21_000, maxFeePerGas: 10_000_000_000n, maxPriorityFeePerGas: 1_000_000_000n }));
  }

  describe("replay", function () {
    it("brings back the same blocks, state, pending transactions and mining mode, journaling each write before answering it", async () => {
      // A chain whose blocks are two days old, as when npm start is started again two days later.
      const a = await start({ initialDate: new Date(Date.now() - 2 * 86_400_000).toISOString() });
      const alice = wallet(5);
      const raw = await signed(a.rpc, alice, wallet(6).address, 7n);
      const hash = await a.rpc("eth_sendRawTransaction", [raw]);
      // Answered: its block (with the exact bytes sent) is already in the journal.
      const mined = await a.rpc("eth_getTransactionReceipt", [hash]);
      expect(records().find((r) => r.k === "block" && r.n === Number(mined.blockNumber))).to.deep.include({ txs: [raw] });
      const from0 = (await a.rpc("eth_accounts"))[0];
      const created = await a.rpc("eth_sendTransaction", [{ from: from0, data: ANSWER_42 }]); // signed by the node itself
      const contract = (await a.rpc("eth_getTransactionReceipt", [created])).contractAddress;
      let reverted = "";
      await a.rpc("eth_sendTransaction", [{ from: from0, data: REVERTS }]).catch((e: Error) => (reverted = e.message)); // failed, but mined
      expect(reverted).to.match(/revert/i);
      await a.rpc("evm_mine");
      await a.rpc("evm_increaseTime", [3_600]);
      await a.rpc("evm_mine");
      await a.rpc("hardhat_mine", ["0x3", "0x10"]);
      await a.rpc("hardhat_setBalance", [wallet(7).address, "0x1234"]);
      await a.rpc("hardhat_setStorageAt", [contract, "0x1", `0x${"ab".repeat(32)}`]);
      await a.chain.provider.record(DEPLOYMENT);
      await a.rpc("evm_setAutomine", [false]);
      const pendingRaw = await signed(a.rpc, alice, wallet(6).address, 9n);
      const pending = await a.rpc("eth_sendRawTransaction", [pendingRaw]);
      expect(records().at(-1)).to.deep.equal({ k: "tx", hash: pending, raw: pendingRaw });
      const state = async (rpc: typeof a.rpc) => ({
        latest: await rpc("eth_getBlockByNumber", ["latest", false]),
        balances: await Promise.all([5, 6, 7].map((i) => rpc("eth_getBalance", [wallet(i).address, "latest"]))),
        code: await rpc("eth_getCode", [contract, "latest"]),
        slot: await rpc("eth_getStorageAt", [contract, "0x1", "latest"]),
        answer: await rpc("eth_call", [{ to: contract, data: "0x" }, "latest"]),
        nonce: await rpc("eth_getTransactionCount", [alice.address, "latest"]),
        automine: await rpc("hardhat_getAutomine"),
        pending: (await rpc("eth_getTransactionByHash", [pending]))?.blockNumber,
      });
      const before = await state(a.rpc);
      expect(before).to.deep.include({ answer: `0x${"2a".padStart(64, "0")}`, automine: false, pending: null });

      // A second node on the same directory, the first left as it was (as after a kill -9: nothing more is written by it).
      killed();
      const b = await start();
      expect(await state(b.rpc)).to.deep.equal(before);
      expect(b.chain.deployment).to.deep.equal(DEPLOYMENT);
      expect(b.chain.replayed).to.deep.include({ head: Number(before.latest.number), resent: 1, automine: false });
      // The replayed chain's clock is not left at its last block's time (replay mined at recorded times).
      const next = await b.rpc("eth_getBlockByNumber", ["pending", false]);
      expect(Number(next.timestamp)).to.be.at.least(Math.floor(Date.now() / 1000) - 5);
      // It goes on where the first left off, and is journaled in turn.
      await b.rpc("evm_mine");
      expect((await b.rpc("eth_getTransactionByHash", [pending])).blockNumber).to.equal(`0x${(Number(before.latest.number) + 1).toString(16)}`);
      killed();
      const c = await start();
      expect(await c.rpc("eth_getBlockByNumber", ["latest", false])).to.deep.equal(await b.rpc("eth_getBlockByNumber", ["latest", false]));
    });

    it("mines on the configured interval itself, journaling each block, and resumes it after a restart", async () => {
      const a = await start({ mining: { auto: false, interval: 300, mempool: { order: "priority" } } });
      const raw = await signed(a.rpc, wallet(5), wallet(6).address, 1n);
      const hash = await a.rpc("eth_sendRawTransaction", [raw]);
      expect(records().some((r) => r.k === "tx" && r.hash === hash), "acknowledged while pending").to.equal(true);
      const end = Date.now() + 10_000;
      while (!(await a.rpc("eth_getTransactionByHash", [hash])).blockNumber) {
        if (Date.now() > end) throw new Error("not mined on the interval");
        await new Promise((r) => setTimeout(r, 50));
      }
      await a.chain.provider.record(DEPLOYMENT);
      expect(records().some((r) => r.k === "block" && r.txs.includes(raw))).to.equal(true);
      await a.chain.close();
      const b = await start({ mining: { auto: false, interval: 300, mempool: { order: "priority" } } });
      const head = b.chain.replayed!.head;
      await new Promise((r) => setTimeout(r, 1_200));
      await b.chain.close(); // stops the interval and waits for the last journal write
      const now = Number(await b.rpc("eth_blockNumber"));
      expect(now).to.be.greaterThan(head);
      expect(records().filter((r) => r.k === "block").at(-1)).to.deep.include({ n: now });
    });
  });

  describe("visibility", function () {
    it("shows no block to a reader or a subscriber before it is on disk", async () => {
      const a = await start();
      const seen: unknown[] = [];
      a.p.on("notification", (n: unknown) => void seen.push(n));
      await a.rpc("eth_subscribe", ["newHeads"]);
      // Hold the journal's disk write: the change is done in the node, not yet on disk.
      const journal = (a.chain.provider as unknown as { journal: { append: (f: Buffer[]) => Promise<void> } }).journal;
      const append = journal.append.bind(journal);
      let release!: () => void;
      const gate = new Promise<void>((r) => (release = r));
      journal.append = async (f) => (await gate, append(f));
      const done: string[] = [];
      const mined = a.rpc("evm_mine").then(() => done.push("mine"));
      const read = a.rpc("eth_blockNumber").then((n: string) => (done.push("read"), n));
      try {
        await new Promise((r) => setTimeout(r, 300));
        expect(done, "nothing answered before the disk write").to.deep.equal([]);
        expect(seen, "no notification before the disk write").to.deep.equal([]);
      } finally {
        release();
      }
      expect(await read).to.equal("0x1");
      await mined;
      expect(done).to.deep.equal(["mine", "read"]);
      expect(seen).to.have.length(1);
    });
  });

  describe("refusals", function () {
    it("refuses calls the journal cannot replay, and nothing is written", async () => {
      const a = await start();
      await a.rpc("evm_mine");
      const snap = await a.rpc("evm_snapshot");
      const bytes = fs.readFileSync(journalPath(dir));
      const head = await a.rpc("eth_blockNumber");
      const refused: Array<[string, unknown[], string]> = [
        ["hardhat_reset", [], "hardhat_reset is not available on npm start's durable chain: it would drop acknowledged blocks"],
        ["evm_revert", [snap], "evm_revert is not available on npm start's durable chain: it would drop acknowledged blocks"],
        ["hardhat_impersonateAccount", [wallet(5).address], "hardhat_impersonateAccount is not available on npm start's durable chain: transactions of impersonated accounts carry no signature to replay"],
        ["hardhat_mine", ["0x3e9"], "hardhat_mine journals every block it mines: at most 1000 in one call"],
        ["hardhat_mine", ["0xnope"], "hardhat_mine journals every block it mines: at most 1000 in one call"],
        ["hardhat_setFutureThing", [1], "hardhat_setFutureThing is not available on npm start's durable chain: it is not journaled"],
        ["hardhat_setCode", [wallet(5).address, `0x${"00".repeat(17_000_000)}`], "hardhat_setCode's parameters are too large to journal (at most 33554432 bytes as JSON)"],
      ];
      for (const [method, params, message] of refused) {
        let err: Error | undefined;
        await a.rpc(method, params).catch((e: Error) => (err = e));
        expect(err?.message, method).to.contain(message);
      }
      expect(await a.rpc("eth_blockNumber")).to.equal(head);
      expect(fs.readFileSync(journalPath(dir)).equals(bytes), "journal unchanged").to.equal(true);
    });
  });

  describe("a journal that does not match", function () {
    it("stops on a chain with another genesis, naming both", async () => {
      const a = await start();
      await a.chain.provider.record(DEPLOYMENT);
      await a.chain.close();
      const err = await start({ chainId: 1337 }).catch((e: Error) => e);
      expect(err).to.be.instanceOf(JournalError);
      expect((err as Error).message).to.match(/was written by another chain \(chain id 31337, genesis 0x[0-9a-f]{64}; this one: chain id 1337, genesis 0x[0-9a-f]{64}\)/);
    });

    it("stops where a block replays to another hash", async () => {
      const a = await start();
      await a.rpc("evm_mine");
      await a.rpc("evm_mine");
      await a.chain.provider.record(DEPLOYMENT);
      await a.chain.close();
      const recs = records().map((r) => (r.k === "block" && r.n === 2 ? { ...r, ts: r.ts + 1 } : r));
      fs.writeFileSync(journalPath(dir), Buffer.concat([Buffer.from("VESTA-CHAIN-JOURNAL 1\n"), ...recs.map(frame)]));
      const err = await start().catch((e: Error) => e);
      expect((err as Error).message).to.match(/does not match this chain: block 2 replays as block 2 with hash 0x[0-9a-f]{64}, not 0x[0-9a-f]{64}; move the data directory away/);
    });

    it("refuses a data directory another live process holds, and takes over one whose holder is gone", async () => {
      const a = await start();
      await a.chain.provider.record(DEPLOYMENT);
      const lock = path.join(path.dirname(journalPath(dir)), "lock");
      const bytes = fs.readFileSync(journalPath(dir));
      const err = await start().catch((e: Error) => e);
      expect((err as Error).message).to.equal(`${dir} is in use by another npm start (pid ${process.pid}): stop it, or set VESTA_DATA_DIR to another directory (if no such process runs, remove ${lock})`);
      expect(fs.readFileSync(journalPath(dir)).equals(bytes), "journal untouched").to.equal(true);
      killed();
      const b = await start();
      expect(b.chain.deployment).to.deep.equal(DEPLOYMENT);
      expect(fs.readFileSync(lock, "utf8")).to.equal(String(process.pid));
    });

    it("stops when off-chain state is there without its chain journal", async () => {
      fs.writeFileSync(path.join(dir, "deployment.json"), "{}");
      fs.writeFileSync(path.join(dir, "billing.sqlite"), "");
      const err = await start().catch((e: Error) => e);
      expect((err as Error).message).to.contain(`${dir} holds off-chain state (deployment.json, billing.sqlite) but no chain journal (${journalPath(dir)})`);
      expect(fs.existsSync(journalPath(dir))).to.equal(false);
    });

    it("starts a new chain when the first start stopped before deploying, keeping the old journal aside", async () => {
      const a = await start();
      await a.rpc("evm_mine");
      await a.chain.close();
      const b = await start();
      expect(b.chain.replayed).to.equal(undefined);
      expect(await b.rpc("eth_blockNumber")).to.equal("0x0");
      expect(lines.join("\n")).to.match(/the chain journal holds no deployment \(the first start stopped before it deployed the contracts\): starting a new chain \(the old journal is kept as .*journal\.incomplete-\d+\)/);
    });

    it("refuses contracts compiled from other sources than the ones the chain runs", async () => {
      const changed = { ...DEPLOYMENT, codeHashes: { AccountConfig: keccak256("0x00"), AccountConfigViews: keccak256("0x00"), AppAuth: keccak256("0x00") } };
      const err = await checkContractsUnchanged(hre, changed, ".vesta").catch((e: Error) => e);
      expect((err as Error).message).to.contain("the contracts changed since .vesta was created (AccountConfig, AccountConfigViews, AppAuth: this checkout compiles other code than the chain there runs)");
    });
  });

  describe("torn and corrupt files", function () {
    const magic = Buffer.from("VESTA-CHAIN-JOURNAL 1\n");
    const recs = [{ k: "a" }, { k: "b", pad: "x".repeat(100) }, { k: "c" }];
    const whole = Buffer.concat([magic, ...recs.map(frame)]);
    const write = (b: Buffer) => {
      fs.writeFileSync(path.join(dir, "j"), b);
      return path.join(dir, "j");
    };
    const last = frame({ k: "d", v: 1 });

    for (const [what, tail] of [
      ["a cut header", last.subarray(0, 5)],
      ["a cut payload", last.subarray(0, last.length - 3)],
      ["a last record with a bad checksum", Buffer.concat([last.subarray(0, 10), Buffer.from([last[10] ^ 1]), last.subarray(11)])],
      ["a zero-filled tail", Buffer.alloc(4096)],
    ] as const) {
      it(`drops ${what} at the end and keeps every whole record`, () => {
        const r = readJournal(write(Buffer.concat([whole, tail])));
        expect(r.records).to.deep.equal(recs);
        expect([r.goodBytes, r.tornBytes]).to.deep.equal([whole.length, tail.length]);
      });
    }

    it("stops on a bad record followed by more data (corruption, not a torn write), naming the byte", () => {
      const second = magic.length + frame(recs[0]).length;
      const bad = Buffer.from(whole);
      bad[second + 20] ^= 0xff;
      expect(() => readJournal(write(bad))).to.throw(JournalError, `is corrupt at byte ${second} (record 2: bad length or checksum, with data after it)`);
    });

    it("stops on a file that is not a journal, and reads a journal cut in its magic line as empty", () => {
      expect(() => readJournal(write(Buffer.from("hello world, not a journal")))).to.throw(JournalError, "is not a Vesta chain journal");
      expect(readJournal(write(magic.subarray(0, 7)))).to.deep.equal({ records: [], goodBytes: 0, tornBytes: 7 });
    });

    it("cuts the torn tail off at boot and appends after the last whole record", async () => {
      const a = await start();
      await a.rpc("evm_mine");
      await a.chain.provider.record(DEPLOYMENT);
      await a.chain.close();
      const good = fs.readFileSync(journalPath(dir));
      fs.appendFileSync(journalPath(dir), frame({ k: "block", n: 2, ts: 0, hash: "0x", txs: [] }).subarray(0, 30));
      const b = await start();
      expect(lines).to.include("the chain journal ended in a torn record (30 bytes that a stop cut short, never acknowledged): dropped");
      await b.rpc("evm_mine");
      const r = readJournal(journalPath(dir));
      expect(r.tornBytes).to.equal(0);
      expect(fs.readFileSync(journalPath(dir)).subarray(0, good.length).equals(good)).to.equal(true);
      expect((r.records.at(-1) as JournalRecord & { n: number }).n).to.equal(2);
    });
  });
});
