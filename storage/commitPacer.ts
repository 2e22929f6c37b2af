/**
 * Under concurrent writers, commits follow one another at most this often: a commit gathers the
 * writes of several turns of the event loop. At 2 ms, hello-world runs at ~580/s made nearly one
 * ledger commit each (~150 us of the event loop a run in BEGIN and COMMIT); at 10 ms, ~90 us
 * (issue 18, profiles of the http bench). A write waits at most this much longer, and only then.
 */
export const COMMIT_EVERY_MS = 10;

/** What a pacer hands back: the scheduled commit, which can be called off. */
export type Scheduled = { cancel(): void };

/**
 * When a group commit of SQLite writes runs (the billing ledger's, the run history's). A write
 * alone commits at the end of the turn of the event loop that made it (setImmediate), so a lone
 * client never waits for a timer: a run's reservation, then its end, then the next run's are
 * commits of one write each, at once. Once a commit gathered writes of more than one writer
 * (concurrent requests), the next waits until COMMIT_EVERY_MS after it: under load one commit
 * (BEGIN, one WAL append, COMMIT) serves many writes, at the cost of that wait. Without this
 * distinction a lone client paid up to COMMIT_EVERY_MS for each of its commits (a hello-world run
 * took ~20 ms instead of ~3).
 */
export class CommitPacer {
  private lastAt = -Infinity;
  private lastWrites = 0;

  constructor(private readonly everyMs = COMMIT_EVERY_MS) {}

  /** Calls `commit` once it is due (see the class); the caller keeps at most one scheduled at a time. */
  schedule(commit: () => void): Scheduled {
    const wait = this.lastWrites > 1 ? this.lastAt + this.everyMs - performance.now() : 0;
    if (wait <= 0) {
      const immediate = setImmediate(commit);
      return { cancel: () => clearImmediate(immediate) };
    }
    const timer = setTimeout(commit, wait);
    return { cancel: () => clearTimeout(timer) };
  }

  /** A commit of `writes` writes begins now. */
  began(writes: number): void {
    this.lastAt = performance.now();
    this.lastWrites = writes;
  }
}
