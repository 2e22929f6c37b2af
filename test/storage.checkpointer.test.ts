import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { expect } from "chai";
import { sql } from "kysely";
import { Storage } from "../storage";
import { checkpointer, CHECKPOINT_EVERY_MS } from "../storage/checkpointer";

const schema = {
  name: "cp",
  steps: { "0001": async (db: any) => void (await db.schema.createTable("t").addColumn("id", "integer", (c: any) => c.primaryKey()).addColumn("v", "text").execute()) },
};
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Until `check` holds, or throws its last failure after `ms`. */
async function eventually(check: () => void, ms = 5000): Promise<void> {
  const until = Date.now() + ms;
  for (;;) {
    try {
      return check();
    } catch (err) {
      if (Date.now() > until) throw err;
      await sleep(20);
    }
  }
}

describe("storage: SQLite checkpoints off the event loop", () => {
  let dir: string;
  beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), "vesta-cp-"))));
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it("a store's commits never checkpoint on its connection; the checkpointer's thread copies the log into the file", async () => {
    const file = path.join(dir, "s.sqlite");
    const s = await Storage.open<any>({ sqliteFile: file }, schema);
    try {
      const { rows } = await sql<{ wal_autocheckpoint: number }>`PRAGMA wal_autocheckpoint`.execute(s.db);
      expect(rows[0].wal_autocheckpoint).to.equal(0);
      const before = fs.statSync(file).size;
      // ~100 pages of log: far below SQLite's automatic threshold (1000), so only the thread copies them
      const big = "x".repeat(3000);
      for (let i = 0; i < 120; i++) await s.db.insertInto("t").values({ id: i, v: big }).execute();
      await eventually(() => expect(fs.statSync(file).size).to.be.greaterThan(before + 100 * 3000));
      // the rows are all there, read back through the store's connection
      const { count } = (await s.db.selectFrom("t").select((eb: any) => eb.fn.countAll().as("count")).executeTakeFirstOrThrow()) as { count: number };
      expect(Number(count)).to.equal(120);
    } finally {
      await s.close();
    }
    // the last connection (the thread's) closed after the store's: nothing is left in a log
    expect(fs.existsSync(`${file}-wal`)).to.equal(false);
  });

  it("the checkpointer's thread never keeps a process alive: a script that opened a store and left it open exits when its work is done", function () {
    this.timeout(30_000);
    const file = path.join(dir, "script.sqlite");
    // A script (a bench, deploy) that opens a store and never closes it: its event loop empties once the timer fires.
    const script = `
      const { Storage } = require(${JSON.stringify(path.resolve(__dirname, "../storage"))});
      Storage.open({ sqliteFile: ${JSON.stringify(file)} }, { name: "cp", steps: {} }).then(async (s) => {
        await s.db.schema.createTable("t").addColumn("v", "text").execute();
        setTimeout(() => console.log("done"), ${CHECKPOINT_EVERY_MS * 2});
      });`;
    const started = Date.now();
    const r = spawnSync(process.execPath, ["-r", "ts-node/register/transpile-only", "-e", script], { encoding: "utf8", timeout: 20_000 });
    expect(r.stdout.trim(), r.stderr).to.equal("done");
    expect(r.signal, "killed by the timeout: the process did not exit on its own").to.equal(null);
    expect(r.status).to.equal(0);
    expect(Date.now() - started).to.be.lessThan(20_000);
  });

  it("a script that closes its stores one after another finishes each close (the thread keeps the process alive while a close waits for it)", function () {
    this.timeout(30_000);
    const script = `
      const { Storage } = require(${JSON.stringify(path.resolve(__dirname, "../storage"))});
      const schema = { name: "cp", steps: {} };
      (async () => {
        const a = await Storage.open({ sqliteFile: ${JSON.stringify(path.join(dir, "a.sqlite"))} }, schema);
        const b = await Storage.open({ sqliteFile: ${JSON.stringify(path.join(dir, "b.sqlite"))} }, schema);
        await a.db.schema.createTable("t").addColumn("v", "text").execute();
        await b.db.schema.createTable("t").addColumn("v", "text").execute();
        await a.close();
        console.log("a closed");
        await b.close();
        console.log("b closed");
      })();`;
    const r = spawnSync(process.execPath, ["-r", "ts-node/register/transpile-only", "-e", script], { encoding: "utf8", timeout: 20_000 });
    expect(r.stdout.trim().split("\n"), r.stderr).to.deep.equal(["a closed", "b closed"]);
    expect(r.signal, "killed by the timeout").to.equal(null);
    expect(r.status).to.equal(0);
  });

  it("a store whose checkpoint thread failed goes back to SQLite's automatic checkpoint; stores opened later get a new thread", async () => {
    const first = await Storage.open<any>({ sqliteFile: path.join(dir, "a.sqlite") }, schema);
    try {
      const worker = (checkpointer as unknown as { worker?: { terminate(): Promise<number> } }).worker;
      expect(worker, "the checkpointer's thread runs").to.not.equal(undefined);
      await worker!.terminate();
      await sleep(CHECKPOINT_EVERY_MS);
      const { rows } = await sql<{ wal_autocheckpoint: number }>`PRAGMA wal_autocheckpoint`.execute(first.db);
      expect(rows[0].wal_autocheckpoint).to.equal(1000);
      const later = await Storage.open<any>({ sqliteFile: path.join(dir, "b.sqlite") }, schema);
      try {
        const file = path.join(dir, "b.sqlite");
        const before = fs.statSync(file).size;
        for (let i = 0; i < 40; i++) await later.db.insertInto("t").values({ id: i, v: "y".repeat(3000) }).execute();
        await eventually(() => expect(fs.statSync(file).size).to.be.greaterThan(before + 30 * 3000));
      } finally {
        await later.close();
      }
    } finally {
      await first.close();
    }
  });
});
