import { sql, type Kysely } from "kysely";
import type { Storage } from "../storage";
import type { BillingDb } from "./schema";

/** One write of the ledger: its queries, on the transaction it is given. */
export type Write<T> = (trx: Kysely<BillingDb>) => Promise<T>;
type Entry = { write: Write<unknown>; resolve: (value: unknown) => void; reject: (err: unknown) => void };

/** Commits follow one another at most this often: under load a commit gathers the writes of several turns. */
export const COMMIT_EVERY_MS = 2;

/**
 * The ledger's writes. On SQLite (the file belongs to this process) they are committed together in
 * one transaction at the end of the turn of the event loop that made the first of them
 * (setImmediate), or COMMIT_EVERY_MS after the last commit when that was sooner: under concurrent
 * requests one commit (one WAL append) serves many. A run's reservation, its start and its end were
 * three commits of their own: ~130 us of CPU and ~300 us of event loop blocked in writes per run on
 * the 2-core dev machine; in one commit ~70 us and ~140 us, eight runs to a commit ~40 us and
 * ~120 us (scratch measurements, issue 18). On PostgreSQL (shared by replicas, each write a round
 * trip that blocks nothing) each write is a transaction of its own, committed before it resolves.
 *
 * Each grouped write runs in a savepoint of its own, in the order added: one that throws rolls
 * back alone and rejects only its promise; a commit that fails rejects them all. A promise resolves
 * (with the write's result) once its commit returned: the write is then as durable as any other
 * commit of the ledger. Whoever reads the ledger and must see every write so far awaits flush() first.
 */
export class GroupCommit {
  private queue: Entry[] = [];
  private scheduled?: { cancel(): void };
  private lastCommit = 0;
  /** The commit under way (the next waits for it: one connection, one transaction at a time). */
  private committing: Promise<void> = Promise.resolve();

  constructor(private readonly s: Storage<BillingDb>) {}

  /** Runs `write` in the next commit; resolves with its result once committed. */
  add<T>(write: Write<T>): Promise<T> {
    if (this.s.dialect.shared) return this.s.transaction(write);
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ write, resolve: resolve as (value: unknown) => void, reject });
      if (this.scheduled) return;
      const wait = this.lastCommit + COMMIT_EVERY_MS - performance.now();
      if (wait <= 0) {
        const immediate = setImmediate(() => void this.flush());
        this.scheduled = { cancel: () => clearImmediate(immediate) };
      } else {
        const timer = setTimeout(() => void this.flush(), wait);
        this.scheduled = { cancel: () => clearTimeout(timer) };
      }
    });
  }

  /** Commits what was added so far, now; resolves once it (and any commit before it) is committed. Never rejects (each write's promise does). */
  flush(): Promise<void> {
    this.scheduled?.cancel();
    this.scheduled = undefined;
    const batch = this.queue;
    if (batch.length === 0) return this.committing;
    this.queue = [];
    this.lastCommit = performance.now();
    this.committing = this.committing.then(() => this.commit(batch));
    return this.committing;
  }

  private async commit(batch: Entry[]): Promise<void> {
    const outcomes: ({ ok: true; value: unknown } | { ok: false; error: unknown })[] = [];
    try {
      await this.s.transaction(async (trx) => {
        for (const entry of batch) {
          await sql`SAVEPOINT vesta_write`.execute(trx);
          try {
            outcomes.push({ ok: true, value: await entry.write(trx) });
            await sql`RELEASE SAVEPOINT vesta_write`.execute(trx);
          } catch (error) {
            outcomes.push({ ok: false, error });
            await sql`ROLLBACK TO SAVEPOINT vesta_write`.execute(trx);
            await sql`RELEASE SAVEPOINT vesta_write`.execute(trx);
          }
        }
      });
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
