import { sql, type Kysely } from "kysely";
import type { Storage } from "../storage";
import { CommitPacer, type Scheduled } from "../storage/commitPacer";
import type { BillingDb } from "./schema";

/** One write of the ledger: its queries, on the transaction it is given. */
export type Write<T> = (trx: Kysely<BillingDb>) => Promise<T>;
type Entry = { write: Write<unknown>; resolve: (value: unknown) => void; reject: (err: unknown) => void };

/**
 * The ledger's writes. On SQLite (the file belongs to this process) they are committed together in
 * one transaction, when the CommitPacer says (at the end of the turn that made the first of them,
 * or under concurrent writers COMMIT_EVERY_MS after the last commit): under concurrent requests one
 * commit (one WAL append) serves many. A run's reservation, its start and its end were
 * three commits of their own: ~130 us of CPU and ~300 us of event loop blocked in writes per run on
 * the 2-core dev machine; in one commit ~70 us and ~140 us, eight runs to a commit ~40 us and
 * ~120 us (scratch measurements, issue 18). On PostgreSQL (shared by replicas, each write a round
 * trip that blocks nothing) each write is a transaction of its own, committed before it resolves.
 *
 * The writes run in the order added. One that throws rejects only its promise: the batch is then
 * run again with each write in a savepoint of its own, so that one rolls back alone (writes fail
 * seldom: the first try runs without savepoints, two statements fewer a write). A commit that fails
 * rejects them all. A promise resolves
 * (with the write's result) once its commit returned: the write is then as durable as any other
 * commit of the ledger. Whoever reads the ledger and must see every write so far awaits flush() first.
 */
export class GroupCommit {
  private queue: Entry[] = [];
  private scheduled?: Scheduled;

  /** The commit under way (the next waits for it: one connection, one transaction at a time). */
  private committing: Promise<void> = Promise.resolve();

  constructor(
    private readonly s: Storage<BillingDb>,
    private readonly pacer = new CommitPacer(),
  ) {}

  /** Runs `write` in the next commit; resolves with its result once committed. */
  add<T>(write: Write<T>): Promise<T> {
    return this.enqueue(write).done;
  }

  /**
   * Like add; `withdraw()` takes the write back while it still waits for its commit (true: it will
   * not run, and `done` resolves undefined), false once its commit began (or on PostgreSQL, where
   * each write commits at once).
   */
  addWithdrawable<T>(write: Write<T>): { done: Promise<T | undefined>; withdraw(): boolean } {
    const { done, entry } = this.enqueue(write);
    return {
      done,
      withdraw: () => {
        const at = entry ? this.queue.indexOf(entry) : -1;
        if (at < 0) return false;
        this.queue.splice(at, 1);
        entry!.resolve(undefined);
        return true;
      },
    };
  }

  private enqueue<T>(write: Write<T>): { done: Promise<T>; entry?: Entry } {
    if (this.s.dialect.shared) return { done: this.s.transaction(write) };
    let entry: Entry | undefined;
    const done = new Promise<T>((resolve, reject) => {
      entry = { write, resolve: resolve as (value: unknown) => void, reject };
      this.queue.push(entry);
      if (!this.scheduled) this.scheduled = this.pacer.schedule(() => void this.flush());
    });
    return { done, entry };
  }

  /** Commits what was added so far, now; resolves once it (and any commit before it) is committed. Never rejects (each write's promise does). */
  flush(): Promise<void> {
    this.scheduled?.cancel();
    this.scheduled = undefined;
    const batch = this.queue;
    if (batch.length === 0) return this.committing;
    this.queue = [];
    this.pacer.began(batch.length);
    this.committing = this.committing.then(() => this.commit(batch));
    return this.committing;
  }

  private async commit(batch: Entry[]): Promise<void> {
    const outcomes: ({ ok: true; value: unknown } | { ok: false; error: unknown })[] = [];
    const failedWrite = Symbol("a write failed");
    let writeError: { error: unknown } | undefined;
    try {
      await this.s.transaction(async (trx) => {
        for (const entry of batch) {
          try {
            outcomes.push({ ok: true, value: await entry.write(trx) });
          } catch (error) {
            writeError = { error };
            throw failedWrite; // rolls the whole batch back
          }
        }
      });
    } catch (error) {
      if (error !== failedWrite) {
        for (const entry of batch) entry.reject(error);
        return;
      }
      if (batch.length === 1) return batch[0].reject(writeError!.error);
      // Run again below, each write in a savepoint: only the failing one rolls back.
      outcomes.length = 0;
      if (!(await this.commitEach(batch, outcomes))) return;
    }
    batch.forEach((entry, i) => {
      const outcome = outcomes[i];
      if (outcome.ok) entry.resolve(outcome.value);
      else entry.reject(outcome.error);
    });
  }

  /** The batch again, each write in a savepoint; false when the commit failed (every write rejected). */
  private async commitEach(batch: Entry[], outcomes: ({ ok: true; value: unknown } | { ok: false; error: unknown })[]): Promise<boolean> {
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
      return false;
    }
    return true;
  }
}
