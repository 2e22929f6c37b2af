import { expect } from "chai";
import os from "node:os";
import path from "node:path";
import fs from "node:fs";
import { computeCid } from "../executor/cid";
import { CodeStore } from "../executor/codeStore";
import { Dialect, type StoreLocation } from "../storage";
import pino from "pino";
import { startRelayer, type RunningRelayer } from "../relayer/server";
import { call, newAccount, startStack, type Stack } from "./helpers/relayer";
import { dropTempDatabase, STORES, storeEnv, tempStore } from "./helpers/postgres";
import { rawExec, rawQuery } from "./helpers/rawDb";
import { ACTION_CODE_SQLITE_V0 } from "./helpers/legacySchemas";
import { Client } from "pg";

for (const store of STORES)
describe(`the code store: what runs by ipfs_id is what its CID names (${store})`, function () {
  this.timeout(60_000);
  let dir: string;
  let where: StoreLocation;
  let drop: (() => Promise<void>) | undefined;
  beforeEach(async function () {
    ({ where, dir, drop } = await tempStore(this, store, "actions.sqlite"));
  });
  afterEach(async () => drop?.());
  const open = (bytesPerPayer = 1024 * 1024, onMismatch?: (cid: string, problem: string) => void) => CodeStore.open(where, { bytesPerPayer, onMismatch });
  /** A code row written behind the store's back: TEXT (as older versions wrote it, SQLite) or bytes. */
  const sqlValue = (code: string | Buffer) =>
    store === "PostgreSQL" ? `decode('${Buffer.from(code).toString("hex")}', 'hex')` : typeof code === "string" ? `'${code.replaceAll("'", "''")}'` : `X'${code.toString("hex")}'`;
  const insertRaw = (rows: [string, string | Buffer][]) =>
    rawExec(where, rows.map(([cid, code]) => `INSERT INTO action_code (cid, code, stored_at) VALUES ('${cid}', ${sqlValue(code)}, 0);`).join("\n"));

  /** A code store whose database already holds `rows` (cid → TEXT or bytes), as written behind its back. */
  async function storeWith(rows: [string, string | Buffer][], onMismatch?: (cid: string, problem: string) => void): Promise<CodeStore> {
    await (await open()).close();
    await insertRaw(rows);
    return open(1024 * 1024, onMismatch);
  }

  it("keeps the exact bytes (BOM, NUL, CR) and reads them back", async function () {
    const bytes = Buffer.from("\uFEFFasync function main() { return '\u0000\r' }\r\n", "utf8");
    const cid = await computeCid(bytes);
    const s = await open();
    await s.put(cid, bytes, "account:a");
    await s.close();
    const again = await open();
    expect(Buffer.from((await again.get(cid))!).equals(bytes)).to.equal(true);
    await again.close();
  });

  it("code stored through one process is read by another on the same database (replicas share it)", async function () {
    const [a, b] = [await open(), await open()];
    try {
      const bytes = Buffer.from("async function main() { return 'shared' }", "utf8");
      const cid = await computeCid(bytes);
      expect(await b.get(cid)).to.equal(undefined);
      await a.put(cid, bytes, "account:a");
      expect(Buffer.from((await b.get(cid))!).equals(bytes)).to.equal(true);
      expect(await b.heldBy("account:a")).to.deep.equal({ bytes: bytes.length, cids: 1 });
    } finally {
      await a.close();
      await b.close();
    }
  });

  it("reads a row that does not hash to its CID, or is not UTF-8, as missing, and says so", async function () {
    const cid = await computeCid("async function main() { return 'audited' }");
    const other = await computeCid("x");
    const problems: string[] = [];
    const s = await storeWith(
      [
        [cid, "async function main() { return 'swapped' }"],
        [other, Buffer.from([0x78, 0xff])],
      ],
      (c, p) => problems.push(`${c}: ${p}`),
    );
    expect(await s.get(cid)).to.equal(undefined);
    expect(await s.get(other)).to.equal(undefined);
    expect(problems).to.deep.equal([`${cid}: the stored code hashes to ${await computeCid("async function main() { return 'swapped' }")}`, `${other}: the stored code is not valid UTF-8`]);
    await s.close();
  });

  it("keeps each payer within its bytes, dropping its least recently used code first; a CID another payer holds stays", async function () {
    const s = await open(2000);
    const codes = await Promise.all(
      [1, 2, 3, 4].map(async (n) => {
        const bytes = Buffer.from(`async function main() { return ${n} }\n//${"x".repeat(900)}`, "utf8"); // ~937 bytes: two fit
        return { bytes, cid: await computeCid(bytes) };
      }),
    );
    const [a, b, c, d] = codes;
    await s.put(a.cid, a.bytes, "account:attacker");
    await s.put(b.cid, b.bytes, "account:attacker");
    await s.put(b.cid, b.bytes, "wallet:0xOther"); // the same code, stored by another payer too
    await s.touch(a.cid, "account:attacker"); // a was run again: b is now the attacker's least recently used
    await s.put(c.cid, c.bytes, "account:attacker"); // past 2000 bytes: b leaves the attacker's (stays the other's)
    await s.put(d.cid, d.bytes, "account:attacker"); // and now a goes (no one else holds it: deleted)
    expect(await s.heldBy("account:attacker")).to.deep.equal({ bytes: c.bytes.length + d.bytes.length, cids: 2 });
    expect(await s.heldBy("wallet:0xOther")).to.deep.equal({ bytes: b.bytes.length, cids: 1 });
    const kept = await Promise.all(codes.map(async (x) => (await s.get(x.cid)) !== undefined));
    expect(kept).to.deep.equal([false, true, true, true]);
    await s.close();
    // An account that stores one new action after another keeps a fixed amount, and the database only that.
    const again = await open(3000);
    for (let n = 0; n < 200; n++) {
      const bytes = Buffer.from(`async function main() { return "${n}" }\n//${"y".repeat(500)}`, "utf8");
      await again.put(await computeCid(bytes), bytes, "account:flood");
    }
    expect((await again.heldBy("account:flood")).bytes).to.be.at.most(3000);
    await again.close();
    const [{ n }] = await rawQuery<{ n: unknown }>(where, "SELECT COUNT(*) AS n FROM action_code");
    expect(Number(n)).to.equal(3 + 5); // b, c, d; and the flood's last five (about 540 bytes each)
  });

  // Review finding: running code another payer stored made it the runner's "newest", so the runner's
  // own store of it then wrote nothing: it owned nothing, and the code went with the other's eviction.
  it("a payer that ran code another payer stored, then sends it, owns it (its run did not make it its newest)", async function () {
    const s = await open(100);
    const x = Buffer.from("// shared code".padEnd(60, " "));
    const cx = await computeCid(x);
    await s.put(cx, x, "payerQ");
    await s.touch(cx, "payerP"); // P runs X by its CID: P holds nothing to touch
    await s.put(cx, x, "payerP");
    expect(await s.heldBy("payerP")).to.deep.equal({ bytes: 60, cids: 1 });
    const y = Buffer.from("// Q's next".padEnd(60, " "));
    await s.put(await computeCid(y), y, "payerQ"); // Q's eviction of X leaves it P's
    await s.settled();
    const fresh = await open(100); // no cache: what the database holds
    expect(Buffer.from((await fresh.get(cx))!)).to.deep.equal(x);
    await Promise.all([s.close(), fresh.close()]);
  });

  // Review finding: one store evicting many CIDs took a lock per CID in one transaction; at 20,000
  // PostgreSQL ran out of lock memory ("out of shared memory"), failing other payers' stores too.
  it("a store that drops very many CIDs does it in transactions of at most 100 of them, and drops them all", async function () {
    const s = await open(250 * 60);
    const codes = Array.from({ length: 250 }, (_, i) => Buffer.from(`// small ${i}`.padEnd(60, " ")));
    for (const b of codes) await s.put(await computeCid(b), b, "payerM");
    const turns = new Map<unknown, number>();
    const trySerialize = Dialect.prototype.trySerialize;
    Dialect.prototype.trySerialize = function (this: Dialect, trx, key) {
      turns.set(trx, (turns.get(trx) ?? 0) + 1);
      return trySerialize.call(this, trx, key);
    };
    const big = Buffer.from("// big".padEnd(250 * 60, " "));
    try {
      await s.put(await computeCid(big), big, "payerM");
    } finally {
      Dialect.prototype.trySerialize = trySerialize;
    }
    await s.settled();
    expect(Math.max(...turns.values())).to.equal(100);
    expect([...turns.values()].reduce((a, b) => a + b)).to.equal(250);
    expect(await s.heldBy("payerM")).to.deep.equal({ bytes: 250 * 60, cids: 1 });
    expect(await rawQuery(where, "SELECT COUNT(*) AS n FROM action_code")).to.deep.equal([{ n: store === "PostgreSQL" ? "1" : 1 }]);
    await s.close();
  });

  it("a payer's stores raced against each other keep it within its bytes", async function () {
    const s = await open(3000);
    const other = store === "PostgreSQL" ? await open(3000) : s; // another process on the same database (a SQLite file has one)
    const codes = await Promise.all(Array.from({ length: 24 }, async (_, n) => {
      const bytes = Buffer.from(`async function main() { return "race ${n}" }\n//${"z".repeat(500)}`, "utf8");
      return { bytes, cid: await computeCid(bytes) };
    }));
    await Promise.all(codes.map((c, i) => (i % 2 ? s : other).put(c.cid, c.bytes, "account:racer")));
    const held = await s.heldBy("account:racer");
    expect(held.bytes).to.be.at.most(3000);
    expect(held.cids).to.equal(5); // as many as fit: none dropped twice, none kept over
    await s.close();
    if (other !== s) await other.close();
  });

  if (store === "SQLite")
    it("picks up files of older versions: rows stored as text, and a file from before owners were kept", async function () {
      const code = "async function main() { return '✓' }";
      const cid = await computeCid(code);
      await rawExec(where, `CREATE TABLE action_code (cid TEXT PRIMARY KEY, code TEXT NOT NULL, stored_at INTEGER NOT NULL);`);
      await insertRaw([[cid, code]]);
      const s = await open();
      expect(Buffer.from((await s.get(cid))!).toString("utf8")).to.equal(code);
      expect(await s.heldBy("account:a")).to.deep.equal({ bytes: 0, cids: 0 }); // the owners' table exists now
      await s.close();
      // and a file of the version just before migrations, with owners
      const newer = path.join(dir, "v0.sqlite");
      await rawExec({ sqliteFile: newer }, `${ACTION_CODE_SQLITE_V0}
        INSERT INTO action_code VALUES ('${cid}', X'${Buffer.from(code).toString("hex")}', 1);
        INSERT INTO action_code_owner VALUES ('account:a', '${cid}', ${Buffer.byteLength(code)}, 5);`);
      const v0 = await CodeStore.open({ sqliteFile: newer }, { bytesPerPayer: 1024 });
      expect(Buffer.from((await v0.get(cid))!).toString("utf8")).to.equal(code);
      expect(await v0.heldBy("account:a")).to.deep.equal({ bytes: Buffer.byteLength(code), cids: 1 });
      await v0.close();
      for (const file of [where.sqliteFile, newer])
        expect((await rawQuery<{ name: string }>({ sqliteFile: file }, "SELECT name FROM action_code_migrations")).map((r) => r.name)).to.deep.equal(["0001_initial"]);
    });
});

/**
 * The relayer's code store with DATABASE_URL: code one relayer stored runs by its CID through
 * another relayer that has its own data directory (replicas share the store); without it each data
 * directory has its own.
 */
for (const store of STORES)
describe(`the relayer's action code across relayers (${store})`, function () {
  this.timeout(120_000);
  let stack: Stack;
  let second: RunningRelayer | undefined;
  let otherDir: string;
  before(async function () {
    stack = await startStack({ payerCount: 1, env: await storeEnv(this, store) });
    otherDir = fs.mkdtempSync(path.join(os.tmpdir(), "vesta-replica-"));
  });
  after(async () => {
    await second?.close();
    await stack?.stop();
    await dropTempDatabase(stack?.relayerConfig.databaseUrl);
    fs.rmSync(otherDir, { recursive: true, force: true });
  });

  it(store === "PostgreSQL" ? "runs by ipfs_id through a second relayer the code stored through the first" : "keeps code in each relayer's data directory", async function () {
    const { apiKey } = await newAccount(stack);
    const code = `async function main() { return "stored once ${store}" }`;
    const stored = await call(stack, "POST", "/lit_action", { key: apiKey, body: { code } });
    expect([stored.status, stored.body.response]).to.deep.equal([200, `stored once ${store}`]);
    second = await startRelayer({ ...stack.relayerConfig, dataDir: otherDir, localRootSecretFile: path.join(otherDir, "root-secret") }, pino({ level: "silent" }));
    const r = await fetch(`${second.url}/core/v1/lit_action`, { method: "POST", headers: { "x-api-key": apiKey, "content-type": "application/json" }, body: JSON.stringify({ ipfs_id: stored.body.ipfs_id }) });
    const body = await r.json();
    if (store === "PostgreSQL") expect([r.status, body.response]).to.deep.equal([200, `stored once ${store}`]);
    else expect([r.status, body.code]).to.deep.equal([404, "action_code_not_found"]);
  });
});

describe("a relayer whose DATABASE_URL cannot be reached", function () {
  this.timeout(120_000);
  it("refuses to start, naming the store and the reason", async function () {
    const err = await startStack({ payerCount: 1, env: { DATABASE_URL: "postgres://vesta@127.0.0.1:1/vesta" } }).then(
      async (s) => (await s.stop(), undefined),
      (e: unknown) => e,
    );
    expect((err as Error).message).to.equal("the action_code store's database (postgres) cannot be opened: connect ECONNREFUSED 127.0.0.1:1");
  });
});

// One payer's eviction racing another payer's store of the same CID (review finding, PostgreSQL):
// the eviction deleted the code "where no owner row exists" while the other store's owner row was
// inserted but not committed, leaving that payer owning (and billed for) code no replica could read.
// A store now holds the CID's turn; an eviction deletes the code only when it gets that turn at once.
for (const store of STORES)
  describe(`code store: an eviction racing another payer's store of the same CID (${store})`, function () {
    this.timeout(300_000);
    let where: Awaited<ReturnType<typeof tempStore>>;
    let a: CodeStore;
    let b: CodeStore;
    let c: CodeStore;
    before(async function () {
      where = await tempStore(this, store, "actions.sqlite");
      a = await CodeStore.open(where.where, { bytesPerPayer: 100 }); // one at a time: the first migrates the file
      b = await CodeStore.open(where.where, { bytesPerPayer: 100 });
      c = await CodeStore.open(where.where, { bytesPerPayer: 100 });
    });
    after(async () => {
      await Promise.all([a?.close(), b?.close(), c?.close()]);
      await where?.drop();
    });

    it("never leaves an owner row without its code (40 rounds of payer A evicting X while payer B stores X)", async function () {
      const lost: string[] = [];
      for (let i = 0; i < 40; i++) {
        const x = Buffer.from(`// x ${i} ${Math.random()}`.padEnd(60, " "));
        const y = Buffer.from(`// y ${i} ${Math.random()}`.padEnd(60, " "));
        const [cx, cy] = [await computeCid(x), await computeCid(y)];
        await a.put(cx, x, "payerA");
        // A's store of Y evicts X (100 bytes per payer); B's store of X starts a little after, inside A's transaction.
        await Promise.all([a.put(cy, y, "payerA"), new Promise((r) => setTimeout(r, i % 6)).then(() => b.put(cx, x, "payerB"))]);
        const owned = await rawQuery(where.where, `SELECT cid FROM action_code_owner WHERE payer = 'payerB' AND cid = '${cx}'`);
        if (owned.length === 1 && (await c.get(cx)) === undefined) lost.push(cx);
      }
      const dangling = await rawQuery(where.where, "SELECT o.payer, o.cid FROM action_code_owner o LEFT JOIN action_code c ON c.cid = o.cid WHERE c.cid IS NULL");
      expect({ lost: lost.length, dangling: dangling.length }).to.deep.equal({ lost: 0, dangling: 0 });
    });

    /** Code rows no payer owns (each was evicted by its last owner, or should have been). */
    const ownerless = async () => (await rawQuery<{ cid: string }>(where.where, "SELECT c.cid FROM action_code c WHERE NOT EXISTS (SELECT 1 FROM action_code_owner o WHERE o.cid = c.cid)")).map((r) => r.cid);

    // Review finding (this session's own attack): an eviction that found the CID's turn taken kept the
    // code, trusting the other transaction to own it. When that transaction was another payer's
    // eviction of the same code (each saw the other's owner row, not yet deleted) or a store that then
    // failed, the code stayed with no owner: kept forever, paid for and evictable by no one.
    it("never leaves code no payer owns (40 rounds of payers A and B evicting the same X at once)", async function () {
      for (let i = 0; i < 40; i++) {
        const x = Buffer.from(`// shared ${i} ${Math.random()}`.padEnd(60, " "));
        const [ya, yb] = [Buffer.from(`// a ${i} ${Math.random()}`.padEnd(60, " ")), Buffer.from(`// b ${i} ${Math.random()}`.padEnd(60, " "))];
        const cx = await computeCid(x);
        await a.put(cx, x, "payerA");
        await b.put(cx, x, "payerB");
        await Promise.all([a.put(await computeCid(ya), ya, "payerA"), new Promise((r) => setTimeout(r, i % 4)).then(async () => b.put(await computeCid(yb), yb, "payerB"))]);
        expect(await rawQuery(where.where, `SELECT payer FROM action_code_owner WHERE cid = '${cx}'`), `round ${i}: X is still owned`).to.deep.equal([]);
      }
      await Promise.all([a.settled(), b.settled()]);
      expect(await ownerless()).to.deep.equal([]);
    });

    /** A connection in a transaction that holds `cid`'s turn (as a store or an eviction of it by another replica would). */
    async function holdingTurn(cid: string): Promise<Client> {
      const c = new Client({ connectionString: where.where.databaseUrl });
      await c.connect();
      await c.query("BEGIN");
      await c.query("SELECT pg_advisory_xact_lock(hashtext($1))", [`action_code_cid:${cid}`]);
      return c;
    }

    if (store === "PostgreSQL")
      it("deciding about many evicted CIDs whose turns are held takes no connection while it waits: other reads go on", async function () {
        const e = await CodeStore.open(where.where, { bytesPerPayer: 12 * 60 });
        const codes = Array.from({ length: 12 }, (_, i) => Buffer.from(`// many ${i} ${Math.random()}`.padEnd(60, " ")));
        const cids = await Promise.all(codes.map((b) => computeCid(b)));
        for (let i = 0; i < codes.length; i++) await e.put(cids[i], codes[i], "payerE");
        const unrelated = Buffer.from(`// unrelated ${Math.random()}`);
        const cu = await computeCid(unrelated);
        await c.put(cu, unrelated, "payerU"); // stored through another replica: not in e's memory
        const holder = new Client({ connectionString: where.where.databaseUrl });
        await holder.connect();
        try {
          await holder.query("BEGIN");
          for (const cid of cids) await holder.query("SELECT pg_advisory_xact_lock(hashtext($1))", [`action_code_cid:${cid}`]);
          const big = Buffer.from(`// big ${Math.random()}`.padEnd(12 * 60, " "));
          await e.put(await computeCid(big), big, "payerE"); // evicts the 12, each undecided (more than the pool's 10 connections)
          await new Promise((r) => setTimeout(r, 300));
          const t0 = Date.now();
          expect(Buffer.from((await e.get(cu))!)).to.deep.equal(unrelated);
          expect(Date.now() - t0, "a read while 12 decisions wait").to.be.below(1000);
          await holder.query("ROLLBACK");
        } finally {
          await holder.end();
        }
        await e.settled();
        expect(await rawQuery(where.where, `SELECT cid FROM action_code WHERE cid IN (${cids.map((x) => `'${x}'`).join(",")})`)).to.deep.equal([]);
        await e.close();
      });

    if (store === "PostgreSQL")
      it("decides about code whose turn another transaction held once that one ended: gone if it rolled back, kept if it committed an owner", async function () {
        for (const outcome of ["ROLLBACK", "COMMIT"] as const) {
          const x = Buffer.from(`// held ${outcome} ${Math.random()}`.padEnd(60, " "));
          const y = Buffer.from(`// next ${outcome} ${Math.random()}`.padEnd(60, " "));
          const [cx, cy] = [await computeCid(x), await computeCid(y)];
          await a.put(cx, x, "payerA");
          // Another payer's store of X under way: it holds X's turn and has written its owner row, not committed.
          const other = await holdingTurn(cx);
          try {
            await other.query("INSERT INTO action_code_owner (payer, cid, bytes, used_at) VALUES ('payerB', $1, 60, 1)", [cx]);
            await a.put(cy, y, "payerA"); // A's store of Y evicts X, and answers without waiting for the other store
            await new Promise((r) => setTimeout(r, 200));
            expect(await rawQuery(where.where, `SELECT cid FROM action_code WHERE cid = '${cx}'`), "undecided while the other store is under way").to.have.length(1);
            await other.query(outcome);
          } finally {
            await other.end();
          }
          await a.settled();
          const code = await rawQuery(where.where, `SELECT cid FROM action_code WHERE cid = '${cx}'`);
          expect(code.length, `after the other store's ${outcome}`).to.equal(outcome === "COMMIT" ? 1 : 0);
          if (outcome === "COMMIT") expect(Buffer.from((await c.get(cx))!)).to.deep.equal(x);
        }
        expect(await ownerless()).to.deep.equal([]);

        // A transaction that holds the turn past undecidedWaitMs: the decision is given up and said, the code stays.
        const told: [string, string][] = [];
        const d = await CodeStore.open(where.where, { bytesPerPayer: 100, undecidedWaitMs: 200, onUndecided: (cid, problem) => told.push([cid, problem]) });
        const [z, next] = [Buffer.from(`// z ${Math.random()}`.padEnd(60, " ")), Buffer.from(`// z next ${Math.random()}`.padEnd(60, " "))];
        const cz = await computeCid(z);
        await d.put(cz, z, "payerD");
        const holder = await holdingTurn(cz);
        try {
          await d.put(await computeCid(next), next, "payerD");
          await d.settled();
          await holder.query("ROLLBACK");
        } finally {
          await holder.end();
          await d.close();
        }
        expect(told).to.have.length(1);
        expect(told[0][0]).to.equal(cz);
        expect(told[0][1]).to.equal("another transaction held its turn for more than 200 ms");
        expect(await ownerless()).to.deep.equal([cz]);
      });
  });
