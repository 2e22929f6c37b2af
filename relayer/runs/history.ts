import path from "node:path";
import { CommitPacer, type Scheduled } from "../../storage/commitPacer";
import type { Prepared } from "../../storage/prepared";
import type { Logger } from "pino";
import type { Selectable } from "kysely";
import { Storage, type StoreLocation } from "../../storage";
import { toWellFormed, truncateUtf8 } from "../../protocol/text";
import { hex32 } from "../../protocol/usageKeyShape";
import { RUNS_SCHEMA, type RunsDb } from "./schema";

/** The most bytes (UTF-8) of a run's logs kept in its history (the first ones). */
export const RUN_LOG_BYTES = 16 * 1024;
/** The most bytes (UTF-8) of a run's error (message and stack) kept in its history. */
export const RUN_ERROR_BYTES = 8 * 1024;
/** How often rows past the retention are deleted (and once at start). */
const PRUNE_EVERY_MS = 10 * 60_000;
/** Rows deleted per transaction when pruning (each one short, so runs being recorded never wait long). */
const PRUNE_CHUNK = 5_000;

/** Rows per INSERT statement (12 values each: well within SQLite's 32,766 bound values). */
const INSERT_ROWS = 500;

export type RunStatus = "success" | "failed";

/** One finished run, as the relayer records it: nothing secret (no params, no response, no key; the key's hash only). */
export type RunRecord = {
  id: string;
  accountHash: bigint;
  keyHash: bigint;
  cid: string;
  status: RunStatus;
  /** When the run left the queue for a sandbox (ms). */
  startedAt: number;
  durationMs: number | null;
  costCents: number;
  logs: string;
  error: string | null;
  requestId: string | null;
};

/** A run as list_runs answers it. */
export type StoredRun = {
  run_id: string;
  key_hash: string;
  ipfs_id: string;
  status: RunStatus;
  started_at: string;
  duration_ms: number | null;
  cost_cents: number;
  logs: string;
  logs_truncated: boolean;
  error: string | null;
  request_id: string | null;
};

/** What list_runs filters on, validated at the edge; `cursor` is the `next_cursor` of the page before. */
export type RunQuery = { keyHash?: string; cid?: string; status?: RunStatus; cursor?: number; limit: number };

export type RunHistoryOptions = {
  /** How long a run is kept (ms); 0: nothing is recorded. */
  retentionMs: number;
  /** The most runs kept per account: recording past it (by more than 1 % of it) drops the account's oldest down to it. */
  perAccount: number;
  now?: () => number;
  /** Commits under concurrent records follow one another at most this often (default COMMIT_EVERY_MS; tests). */
  commitEveryMs?: number;
};

type Row = Omit<RunsDb["runs"], "seq">;
type Pending = { row: Row; seq: number; resolve: () => void; reject: (err: unknown) => void };

/** Text any database keeps as it is: well-formed, no NUL (PostgreSQL text cannot hold U+0000). */
const storable = (s: string) => toWellFormed(s).replaceAll("\u0000", "\uFFFD");

const toRun = (r: Selectable<RunsDb["runs"]>): StoredRun => ({
  run_id: r.id,
  key_hash: r.key_hash,
  ipfs_id: r.cid,
  status: r.status,
  started_at: new Date(r.started_at).toISOString(),
  duration_ms: r.duration_ms,
  cost_cents: r.cost_cents,
  logs: r.logs,
  logs_truncated: r.logs_truncated === true || r.logs_truncated === 1,
  error: r.error,
  request_id: r.request_id,
});

/**
 * Every action run's record, per account, on the storage layer (`runs.sqlite` in the data
 * directory, or PostgreSQL with DATABASE_URL, where every replica lists the runs any of them
 * recorded): bounded in time (retentionMs; older rows are never listed and are deleted every
 * PRUNE_EVERY_MS) and in count (perAccount, and 1 % more between trims; past that the account's
 * oldest are dropped), each row bounded in size (logs RUN_LOG_BYTES, error RUN_ERROR_BYTES).
 * Records are group-committed, paced as the billing ledger's (CommitPacer): a record alone commits
 * at the end of its turn of the event loop; once a commit gathered several, the next waits until
 * COMMIT_EVERY_MS after it (one commit for many runs under load; ~2.6 runs a commit at ~500 runs/s
 * without the wait, and a commit costs the event loop ~200 us). Every query is built by Kysely with
 * bound values.
 */
export class RunHistory {
  private pending: Pending[] = [];
  private scheduled?: Scheduled;
  private readonly pacer: CommitPacer;
  // A run's record and its account's count: the hot path's statements, compiled once (see Prepared).
  private readonly insertRun: Prepared<RunsDb, Row>;
  private readonly countRuns: Prepared<RunsDb, { account: string; n: number }>;
  /** A commit is under way (what is recorded meanwhile waits for the next). */
  private writing = false;
  /** Records taken so far, and how many of the first of them are written (committed or failed): records are written in order. */
  private recorded = 0;
  private written = 0;
  /** flush() callers, each told once the records taken before its call are written (not when nothing is pending: that may never come). */
  private waiting: { upTo: number; tell: () => void }[] = [];
  private readonly now: () => number;

  private constructor(
    private readonly s: Storage<RunsDb>,
    private readonly opts: RunHistoryOptions,
  ) {
    this.now = opts.now ?? Date.now;
    this.pacer = new CommitPacer(opts.commitEveryMs);
    this.insertRun = s.prepare((db, p) =>
      db.insertInto("runs").values({
        id: p("id"),
        account: p("account"),
        key_hash: p("key_hash"),
        cid: p("cid"),
        status: p("status"),
        started_at: p("started_at"),
        duration_ms: p("duration_ms"),
        cost_cents: p("cost_cents"),
        logs: p("logs"),
        logs_truncated: p("logs_truncated"),
        error: p("error"),
        request_id: p("request_id"),
      }),
    );
    // Adds the batch's runs of an account to its count, answering the new count.
    this.countRuns = s.prepare((db, p) =>
      db
        .insertInto("run_counts")
        .values({ account: p("account"), n: p("n") })
        .onConflict((oc) => oc.column("account").doUpdateSet((eb) => ({ n: eb("run_counts.n", "+", p("n")) })))
        .returning("n"),
    );
  }

  /** Opens (and migrates) the history at `where`; SQLite commits are durable against a crash of the process (a history needs no fsync per run). */
  static async open(where: StoreLocation, opts: RunHistoryOptions): Promise<RunHistory> {
    return new RunHistory(await Storage.open<RunsDb>({ synchronous: "NORMAL", ...where }, RUNS_SCHEMA), opts);
  }

  /** The history of a relayer: PostgreSQL at `databaseUrl` when set, else `runs.sqlite` in `dataDir`. */
  static inDataDir(dataDir: string, databaseUrl: string | undefined, opts: RunHistoryOptions): Promise<RunHistory> {
    return RunHistory.open({ databaseUrl, sqliteFile: path.join(dataDir, "runs.sqlite") }, opts);
  }

  get enabled(): boolean {
    return this.opts.retentionMs > 0;
  }

  /** Records a finished run, committed with the others of this turn; resolves once committed. Nothing when history is off. */
  record(r: RunRecord): Promise<void> {
    if (!this.enabled) return Promise.resolve();
    const logs = storable(truncateUtf8(r.logs, RUN_LOG_BYTES));
    const row: Row = {
      id: r.id,
      account: hex32(r.accountHash),
      key_hash: hex32(r.keyHash),
      cid: r.cid,
      status: r.status,
      started_at: Math.floor(r.startedAt),
      duration_ms: r.durationMs === null ? null : Math.round(r.durationMs),
      cost_cents: r.costCents,
      logs,
      logs_truncated: logs.length < r.logs.length ? 1 : 0,
      error: r.error === null ? null : storable(truncateUtf8(r.error, RUN_ERROR_BYTES)),
      request_id: r.requestId,
    };
    return new Promise<void>((resolve, reject) => {
      this.pending.push({ row, seq: ++this.recorded, resolve, reject });
      if (this.scheduled || this.writing) return; // the commit under way schedules the next
      this.scheduled = this.pacer.schedule(() => void this.drain());
    });
  }

  /**
   * Commits what was recorded so far; resolves when that is committed, however many records come
   * meanwhile (they do not hold it up). Never rejects (each record's failure goes to its caller).
   */
  flush(): Promise<void> {
    if (this.written === this.recorded) return Promise.resolve();
    const upTo = this.recorded;
    const done = new Promise<void>((tell) => this.waiting.push({ upTo, tell }));
    void this.drain();
    return done;
  }

  /**
   * Commits the pending records. Those recorded meanwhile are committed next: at once when a flush()
   * waits for them, else when the pacer says. Tells each flush() caller once what it waits for is written.
   */
  private async drain(): Promise<void> {
    this.scheduled?.cancel();
    this.scheduled = undefined;
    if (this.writing) return;
    this.writing = true;
    while (this.pending.length > 0) {
      const batch = this.pending;
      this.pending = [];
      this.pacer.began(batch.length);
      await this.write(batch.map((p) => p.row)).then(
        () => batch.forEach((p) => p.resolve()),
        (err) => batch.forEach((p) => p.reject(err)),
      );
      this.written = batch[batch.length - 1].seq;
      this.tellWritten();
      if (this.waiting.length === 0) break; // nobody waits: what came meanwhile goes when the pacer says
    }
    this.writing = false;
    if (this.pending.length > 0) this.scheduled = this.pacer.schedule(() => void this.drain());
  }

  /** Tells the flush() callers whose records are all written (they wait in the order they came, so for ever later records). */
  private tellWritten(): void {
    while (this.waiting.length > 0 && this.waiting[0].upTo <= this.written) this.waiting.shift()!.tell();
  }

  /**
   * One transaction: each account of the batch taken in turn (PostgreSQL: an advisory lock, so
   * replicas trimming one account take turns), its rows inserted and counted, and when it holds
   * more than its cap and 1 %, its oldest deleted down to the cap (the count goes down by what was
   * deleted: a prune deleting at the same time keeps it right).
   */
  private async write(rows: Row[]): Promise<void> {
    const cap = this.opts.perAccount;
    const accounts = [...new Set(rows.map((r) => r.account))].sort();
    await this.s.transaction(async (trx) => {
      for (const account of accounts) await this.s.dialect.serialize(trx, `runs:${account}`);
      // PostgreSQL: a round trip a statement, so many rows to one; SQLite: each row by the statement compiled once.
      if (this.s.dialect.shared) for (let i = 0; i < rows.length; i += INSERT_ROWS) await trx.insertInto("runs").values(rows.slice(i, i + INSERT_ROWS)).execute();
      else for (const row of rows) await this.insertRun.run(trx, row);
      for (const account of accounts) {
        const k = rows.filter((r) => r.account === account).length;
        const { rows: counted } = await this.countRuns.run(trx, { account, n: k });
        const n = counted[0]?.n;
        if (n === undefined) throw new Error("run history: the count of an account's runs was not answered");
        if (Number(n) <= cap + Math.floor(cap / 100)) continue;
        const oldest = trx.selectFrom("runs").select("seq").where("account", "=", account).orderBy("seq").limit(Number(n) - cap);
        const gone = await trx.deleteFrom("runs").where("seq", "in", oldest).executeTakeFirst();
        await trx.updateTable("run_counts").set((eb) => ({ n: eb("n", "-", Number(gone.numDeletedRows)) })).where("account", "=", account).execute();
      }
    });
  }

  /**
   * One page of `accountHash`'s runs within the retention, newest first, filtered; `next_cursor`
   * is null on the last page. The account is always a condition: no query reads another's rows.
   */
  async list(accountHash: bigint, q: RunQuery): Promise<{ runs: StoredRun[]; next_cursor: string | null }> {
    await this.flush(); // read your writes: a run answered a moment ago is listed
    let query = this.s.db
      .selectFrom("runs")
      .selectAll()
      .where("account", "=", hex32(accountHash))
      .where("started_at", ">=", this.now() - this.opts.retentionMs);
    if (q.keyHash !== undefined) query = query.where("key_hash", "=", q.keyHash);
    if (q.cid !== undefined) query = query.where("cid", "=", q.cid);
    if (q.status !== undefined) query = query.where("status", "=", q.status);
    if (q.cursor !== undefined) query = query.where("seq", "<", q.cursor);
    const rows = await query.orderBy("seq", "desc").limit(q.limit + 1).execute();
    const page = rows.slice(0, q.limit);
    return { runs: page.map(toRun), next_cursor: rows.length > q.limit ? String(page[page.length - 1].seq) : null };
  }

  /**
   * Deletes the runs past the retention (all of them when history is off), PRUNE_CHUNK rows a
   * transaction, each account's count down by what went; stops early when `signal` aborts.
   * Answers how many were deleted.
   */
  async prune(signal?: AbortSignal): Promise<number> {
    await this.flush(); // runs recorded this turn are counted before any is deleted
    const before = this.enabled ? this.now() - this.opts.retentionMs : Number.MAX_SAFE_INTEGER;
    const chunk = () =>
      this.s.transaction(async (trx) => {
        const old = trx.selectFrom("runs").select("seq").where("started_at", "<", before).limit(PRUNE_CHUNK);
        const gone = await trx.deleteFrom("runs").where("seq", "in", old).returning("account").execute();
        const per = new Map<string, number>();
        for (const { account } of gone) per.set(account, (per.get(account) ?? 0) + 1);
        for (const [account, k] of [...per].sort(([a], [b]) => (a < b ? -1 : 1))) {
          await trx.updateTable("run_counts").set((eb) => ({ n: eb("n", "-", k) })).where("account", "=", account).execute();
        }
        await trx.deleteFrom("run_counts").where("n", "<=", 0).execute();
        return gone.length;
      });
    let total = 0;
    for (let n = PRUNE_CHUNK; n === PRUNE_CHUNK && !signal?.aborted; ) {
      n = await chunk();
      total += n;
    }
    return total;
  }

  /** Prunes now, then every PRUNE_EVERY_MS until `signal` aborts; a failed prune is logged and tried again at the next. */
  start(signal: AbortSignal, logger: Logger): void {
    const tick = async () => {
      try {
        const n = await this.prune(signal);
        if (n > 0) logger.info({ deleted: n }, "run history: runs past the retention deleted");
      } catch (err) {
        if (!signal.aborted) logger.warn({ err: (err as Error).message }, "run history: pruning failed; tried again later");
      }
    };
    void tick();
    const timer = setInterval(() => void tick(), PRUNE_EVERY_MS);
    timer.unref();
    signal.addEventListener("abort", () => clearInterval(timer), { once: true });
  }

  /** Commits what is pending, then closes the database. */
  async close(): Promise<void> {
    await this.flush().catch(() => undefined); // each record's failure was told to its caller
    await this.s.close();
  }
}
