import { expect } from "chai";
import type { StoreLocation } from "../storage";
import { TriggersStore } from "../triggers/store/store";
import { STORES, tempStore } from "./helpers/postgres";
import { rawExec, rawQuery } from "./helpers/rawDb";
import { TRIGGERS_POSTGRES_V0, TRIGGERS_SQLITE_V0 } from "./helpers/legacySchemas";

/** The triggers store on a database made before the storage layer, by the hand-written store of each database. */
for (const store of STORES)
describe(`triggers store: a database made before migrations (${store})`, function () {
  this.timeout(60_000);
  let where: StoreLocation;
  let drop: (() => Promise<void>) | undefined;
  before(async function () {
    ({ where, drop } = await tempStore(this, store, "triggers.sqlite"));
    // PostgreSQL numbered runs with its sequence; the SQLite store wrote one past the largest
    const seq = (n: number) => (store === "SQLite" ? String(n) : "DEFAULT");
    await rawExec(
      where,
      `${store === "SQLite" ? TRIGGERS_SQLITE_V0 : TRIGGERS_POSTGRES_V0}
      INSERT INTO users VALUES ('usr_1', 'old@example.com', 1);
      INSERT INTO triggers VALUES ('trg_1', 'usr_1', 'old', 'webhook', '1', 'async function main() {}', '{"a":1}', 'sealed', '{}', '{"cursor":5}', 10, 11);
      INSERT INTO runs (id, trigger_id, status, params, seq, created_at) VALUES ('run_q', 'trg_1', 'queued', '{"i":1}', ${seq(1)}, 20);
      INSERT INTO runs (id, trigger_id, status, params, seq, created_at, started_at) VALUES ('run_r', 'trg_1', 'running', '{"i":2}', ${seq(2)}, 21, 22);
      INSERT INTO runs (id, trigger_id, status, params, response, dedupe_key, seq, created_at, finished_at) VALUES ('run_s', 'trg_1', 'success', '{"i":3}', '"done"', 'log:1', ${seq(3)}, 23, 24);`,
    );
  });
  after(async () => drop?.());

  it("takes the database as it is: every row reads back, the queue goes on where it was, and the schema is recorded as migrated", async () => {
    const s = await TriggersStore.open(where);
    try {
      expect(await s.userByEmail("old@example.com", false)).to.deep.equal({ id: "usr_1", email: "old@example.com" });
      expect(await s.getTrigger("trg_1")).to.deep.equal({
        id: "trg_1", userId: "usr_1", name: "old", kind: "webhook", enabled: true, actionCode: "async function main() {}",
        defaultParams: { a: 1 }, usageKeySealed: "sealed", config: {}, state: { cursor: 5 }, createdAt: 10, updatedAt: 11,
      });
      expect((await s.listEnabled("webhook")).map((t) => t.id)).to.deep.equal(["trg_1"]);
      const before = await s.listRuns("trg_1", 10, 0);
      expect([before.total, before.runs.map((r) => [r.id, r.status, r.response])]).to.deep.equal([3, [["run_s", "success", "done"], ["run_r", "running", null], ["run_q", "queued", null]]]);

      expect(await s.failInterrupted(30), "the run the old process left running").to.equal(1);
      expect((await s.getRun("run_r"))!.status).to.equal("failed");
      expect((await s.claim(31))!.id).to.equal("run_q");
      expect(await s.enqueue("trg_1", [{ id: "run_again", params: {}, dedupeKey: "log:1" }], 32), "a dedupe key seen before the migration").to.deep.equal([]);
      expect(await s.enqueue("trg_1", [{ id: "run_new", params: { i: 4 } }], 33)).to.deep.equal(["run_new"]);
      expect((await s.listRuns("trg_1", 1, 0)).runs[0].id, "numbered after the old runs").to.equal("run_new");
      expect(await s.claim(34)).to.include({ id: "run_new", status: "running" });
    } finally {
      await s.close();
    }
    const claimed = await rawQuery<{ id: string; claimed_by: string | null }>(where, "SELECT id, claimed_by FROM runs WHERE id IN ('run_q', 'run_new') ORDER BY id");
    expect(claimed.map((r) => [r.id, /^inst_/.test(r.claimed_by ?? "")])).to.deep.equal([["run_new", true], ["run_q", true]]);
    expect((await rawQuery<{ name: string }>(where, "SELECT name FROM triggers_migrations ORDER BY name")).map((r) => r.name)).to.deep.equal(["0001_initial", "0002_claimed_by", "0003_login_mails"]);
    const reopened = await TriggersStore.open(where);
    expect((await reopened.listRuns("trg_1", 10, 0)).total).to.equal(4);
    await reopened.close();
  });
});
