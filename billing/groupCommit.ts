import type Database from "better-sqlite3";

type Entry = { write: () => unknown; resolve: (value: unknown) => void; reject: (err: unknown) => void };

/** Commits follow one another at most this often: under load a commit gathers the writes of several turns. */
export const COMMIT_EVERY_MS = 2;

/**
 * The ledger's writes, committed together in one SQLite transaction at the end of the turn of the
 * event loop that made the first of them (setImmediate), or COMMIT_EVERY_MS after the last commit
 * when that was sooner: under concurrent requests one commit (one WAL append) serves many. A run's
 * reservation, its start and its end were three commits of their own: ~130 us of CPU and ~300 us
 * of event loop blocked in writes per run on the 2-core dev machine; in one commit ~70 us and
 * ~140 us, eight runs to a commit ~40 us and ~120 us (scratch measurements, issue 18).
 *
 * Each write runs in a savepoint of its own, in the order added: one that throws rolls back alone
 * and rejects only its promise; a commit that fails rejects them all. A promise resolves (with the
 * write's result) once its commit returned: the write is then as durable as any other commit of
 * the ledger. Whoever reads the ledger and must see every write so far calls flush() first.
 */
export class GroupCommit {
  private queue: Entry[] = [];
  private scheduled?: { cancel(): void };
  private lastCommit = 0;

  constructor(private readonly db: Database.Database) {}

  /** Runs `write` in the next commit; resolves with its result once committed. */
  add<T>(write: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ write, resolve: resolve as (value: unknown) => void, reject });
      if (this.scheduled) return;
      const wait = this.lastCommit + COMMIT_EVERY_MS - performance.now();
      if (wait <= 0) {
        const immediate = setImmediate(() => this.flush());
        this.scheduled = { cancel: () => clearImmediate(immediate) };
      } else {
        const timer = setTimeout(() => this.flush(), wait);
        this.scheduled = { cancel: () => clearTimeout(timer) };
      }
    });
  }

  /** Commits what was added so far, now. */
  flush(): void {
    this.scheduled?.cancel();
    this.scheduled = undefined;
    const batch = this.queue;
    if (batch.length === 0) return;
    this.queue = [];
    this.lastCommit = performance.now();
    const outcomes: ({ ok: true; value: unknown } | { ok: false; error: unknown })[] = [];
    try {
      this.db.transaction(() => {
        for (const entry of batch) {
          try {
            outcomes.push({ ok: true, value: this.db.transaction(entry.write)() });
          } catch (error) {
            outcomes.push({ ok: false, error });
          }
        }
      })();
    } catch (error) {
      for (const entry of batch) entry.reject(error);
      return;
    }
    batch.forEach((entry, i) => {
      const outcome = outcomes[i];
      if (outcome.ok) entry.resolve(outcome.value);
      else entry.reject(outcome.error);
    });
  }
}
