import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import type { Logger } from "pino";
import { truncateUtf8 } from "../../protocol/text";
import { GroupCommit } from "../../billing/groupCommit";
import { hex32 } from "../../protocol/usageKeyShape";

/** The most bytes (UTF-8) of a run's logs kept in its history (the first ones). */
export const RUN_LOG_BYTES = 16 * 1024;
/** The most bytes (UTF-8) of a run's error (message and stack) kept in its history. */
export const RUN_ERROR_BYTES = 8 * 1024;
/** How often rows past the retention are deleted (and once at start). */
const PRUNE_EVERY_MS = 10 * 60_000;
/** Rows deleted per statement when pruning (each one short, so runs being recorded never wait long). */
const PRUNE_CHUNK = 5_000;

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
};

/**
 * Three indexes, each a cost of every run recorded (five cost 2.5x the insert of two): the account's
 * runs newest first, carrying status and CID so those filters are read from the index (an account
 * holds at most perAccount and 1 %); a key's runs (what a usage key lists); the retention's order.
 */
const SCHEMA = `
CREATE TABLE IF NOT EXISTS runs (
  seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL, account TEXT NOT NULL, key_hash TEXT NOT NULL, cid TEXT NOT NULL,
  status TEXT NOT NULL, started_at INTEGER NOT NULL, duration_ms INTEGER, cost_cents INTEGER NOT NULL,
  logs TEXT NOT NULL, logs_truncated INTEGER NOT NULL, error TEXT, request_id TEXT);
CREATE INDEX IF NOT EXISTS runs_by_account ON runs (account, seq, status, cid);
CREATE INDEX IF NOT EXISTS runs_by_key ON runs (account, key_hash, seq);
CREATE INDEX IF NOT EXISTS runs_by_start ON runs (started_at);
CREATE TABLE IF NOT EXISTS run_counts (account TEXT PRIMARY KEY, n INTEGER NOT NULL);
`;

type Row = { seq: number; id: string; key_hash: string; cid: string; status: RunStatus; started_at: number; duration_ms: number | null; cost_cents: number; logs: string; logs_truncated: number; error: string | null; request_id: string | null };

const toRun = (r: Row): StoredRun => ({
  run_id: r.id,
  key_hash: r.key_hash,
  ipfs_id: r.cid,
  status: r.status,
  started_at: new Date(r.started_at).toISOString(),
  duration_ms: r.duration_ms,
  cost_cents: r.cost_cents,
  logs: r.logs,
  logs_truncated: r.logs_truncated === 1,
  error: r.error,
  request_id: r.request_id,
});

/**
 * Every action run's record, per account, in `runs.sqlite` of the data directory: bounded in time
 * (retentionMs; older rows are never listed and are deleted every PRUNE_EVERY_MS) and in count
 * (perAccount, and 1 % more between trims; past that the account's oldest are dropped), each row bounded in size (logs
 * RUN_LOG_BYTES, error RUN_ERROR_BYTES). Every query binds its values; the SQL is one of a fixed set.
 */
export class RunHistory {
  private readonly db: Database.Database;
  private readonly stmts;
  /** A run's record is committed with the other writes of its turn (one WAL append for many runs under load). */
  private readonly commits: GroupCommit;
  private readonly lists = new Map<string, Database.Statement>();
  private readonly now: () => number;

  constructor(
    file: string,
    private readonly opts: RunHistoryOptions,
  ) {
    // Opened as the other stores open theirs (executor/codeStore.ts, billing/ledger.ts): write-ahead log, a busy timeout.
    if (file !== ":memory:") fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
    this.db = new Database(file);
    this.db.pragma("journal_mode = WAL");
    this.db.pragma("busy_timeout = 5000");
    this.db.exec(SCHEMA);
    this.now = opts.now ?? Date.now;
    this.stmts = statements(this.db);
    this.commits = new GroupCommit(this.db);
  }

  /** Opens the history in `dataDir`. */
  static inDataDir(dataDir: string, opts: RunHistoryOptions): RunHistory {
    return new RunHistory(path.join(dataDir, "runs.sqlite"), opts);
  }

  get enabled(): boolean {
    return this.opts.retentionMs > 0;
  }

  /**
   * Records a finished run (the row, then the account's cap, in one savepoint), committed at the end
   * of the turn with the others; resolves once committed. Nothing when history is off.
   */
  record(r: RunRecord): Promise<void> {
    if (!this.enabled) return Promise.resolve();
    const account = hex32(r.accountHash);
    const logs = truncateUtf8(r.logs, RUN_LOG_BYTES);
    return this.commits.add(() => {
      this.stmts.insert.run({
        id: r.id,
        account,
        key_hash: hex32(r.keyHash),
        cid: r.cid,
        status: r.status,
        started_at: Math.floor(r.startedAt),
        duration_ms: r.durationMs === null ? null : Math.round(r.durationMs),
        cost_cents: r.costCents,
        logs,
        logs_truncated: logs.length < r.logs.length ? 1 : 0,
        error: r.error === null ? null : truncateUtf8(r.error, RUN_ERROR_BYTES),
        request_id: r.requestId,
      });
      // Each account's row count is kept beside its rows, so the cap costs an index step, not a count;
      // and the oldest are dropped in batches (1 % of the cap past it), not one per run: one delete
      // per run doubled what recording costs an account at its cap (bench/runHistory.ts).
      const { n } = this.stmts.count.get(account)!;
      if (n > this.opts.perAccount + Math.floor(this.opts.perAccount / 100)) {
        this.stmts.dropOldest.run(account, n - this.opts.perAccount);
        this.stmts.setCount.run(this.opts.perAccount, account);
      }
    });
  }

  /**
   * One page of `accountHash`'s runs within the retention, newest first, filtered; `next_cursor`
   * is null on the last page. The account is always a condition: no query reads another's rows.
   */
  list(accountHash: bigint, q: RunQuery): { runs: StoredRun[]; next_cursor: string | null } {
    this.commits.flush(); // read your writes: a run answered a moment ago is listed
    const where = ["account = ?", "started_at >= ?"];
    const args: (string | number)[] = [hex32(accountHash), this.now() - this.opts.retentionMs];
    if (q.keyHash !== undefined) (where.push("key_hash = ?"), args.push(q.keyHash));
    if (q.cid !== undefined) (where.push("cid = ?"), args.push(q.cid));
    if (q.status !== undefined) (where.push("status = ?"), args.push(q.status));
    if (q.cursor !== undefined) (where.push("seq < ?"), args.push(q.cursor));
    const sql = `SELECT * FROM runs WHERE ${where.join(" AND ")} ORDER BY seq DESC LIMIT ?`;
    let stmt = this.lists.get(sql);
    if (!stmt) this.lists.set(sql, (stmt = this.db.prepare(sql))); // at most 16 shapes, each from fixed text
    const rows = stmt.all(...args, q.limit + 1) as Row[];
    const page = rows.slice(0, q.limit);
    return { runs: page.map(toRun), next_cursor: rows.length > q.limit ? String(page[page.length - 1].seq) : null };
  }

  /**
   * Deletes the runs past the retention (all of them when history is off), PRUNE_CHUNK rows a
   * transaction, giving the event loop back between chunks (requests are served meanwhile); stops
   * early when `signal` aborts. Answers how many were deleted.
   */
  async prune(signal?: AbortSignal): Promise<number> {
    this.commits.flush(); // runs recorded this turn are counted before any is deleted
    const before = this.enabled ? this.now() - this.opts.retentionMs : Number.MAX_SAFE_INTEGER;
    const chunk = this.db.transaction(() => {
      const gone = this.stmts.pruneOld.all(before, PRUNE_CHUNK);
      const per = new Map<string, number>();
      for (const { account } of gone) per.set(account, (per.get(account) ?? 0) + 1);
      for (const [account, k] of per) this.stmts.uncount.run(k, account);
      this.stmts.dropZeroCounts.run();
      return gone.length;
    });
    let total = 0;
    for (let n = PRUNE_CHUNK; n === PRUNE_CHUNK && !signal?.aborted; total += n) {
      n = chunk();
      if (n === PRUNE_CHUNK) await new Promise((resolve) => setImmediate(resolve));
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
        logger.warn({ err: (err as Error).message }, "run history: pruning failed; tried again later");
      }
    };
    void tick();
    const timer = setInterval(() => void tick(), PRUNE_EVERY_MS);
    timer.unref();
    signal.addEventListener("abort", () => clearInterval(timer), { once: true });
  }

  close(): void {
    this.commits.flush();
    this.db.close();
  }
}

function statements(db: Database.Database) {
  return {
    insert: db.prepare(
      `INSERT INTO runs (id, account, key_hash, cid, status, started_at, duration_ms, cost_cents, logs, logs_truncated, error, request_id)
       VALUES (@id, @account, @key_hash, @cid, @status, @started_at, @duration_ms, @cost_cents, @logs, @logs_truncated, @error, @request_id)`,
    ),
    count: db.prepare<[string], { n: number }>("INSERT INTO run_counts (account, n) VALUES (?, 1) ON CONFLICT (account) DO UPDATE SET n = n + 1 RETURNING n"),
    dropOldest: db.prepare<[string, number]>("DELETE FROM runs WHERE seq IN (SELECT seq FROM runs WHERE account = ? ORDER BY seq LIMIT ?)"),
    setCount: db.prepare<[number, string]>("UPDATE run_counts SET n = ? WHERE account = ?"),
    pruneOld: db.prepare<[number, number], { account: string }>("DELETE FROM runs WHERE seq IN (SELECT seq FROM runs WHERE started_at < ? LIMIT ?) RETURNING account"),
    uncount: db.prepare<[number, string]>("UPDATE run_counts SET n = n - ? WHERE account = ?"),
    dropZeroCounts: db.prepare("DELETE FROM run_counts WHERE n <= 0"),
  };
}
