/**
 * When the pool may start another sandbox after some died. A sandbox that dies (killed, crashed,
 * out of memory, broke the protocol, never started) is replaced at once the first time; when they
 * keep dying without a run completing in between, each start waits longer: `baseMs`, doubling, at
 * most `maxMs`. A run that completes, or a quiet `forgetMs` since the last death, starts over. So a
 * sandbox that cannot live (a broken install, a ceiling too low, an action that kills its sandbox
 * run after run) costs a few process starts a second at first and one every `maxMs` after that,
 * never a loop of them.
 */

export type BackoffOptions = {
  /** The delay after the second death in a row (default 200 ms); it doubles with each further one. */
  baseMs: number;
  /** The longest delay (default 5 s). */
  maxMs: number;
  /** A death this long after the previous one counts as the first (default 60 s). */
  forgetMs: number;
};

export const DEFAULT_BACKOFF: BackoffOptions = { baseMs: 200, maxMs: 5000, forgetMs: 60_000 };

/** The delay before the next start after `crashes` deaths in a row: none after one, then baseMs doubling, at most maxMs. */
export function backoffDelay(crashes: number, o: BackoffOptions): number {
  if (crashes <= 1) return 0;
  return Math.min(o.maxMs, o.baseMs * 2 ** Math.min(crashes - 2, 30));
}

export class RespawnBackoff {
  private readonly o: BackoffOptions;
  private crashes = 0;
  private lastCrashAt = -Infinity;
  private holdUntil = 0;
  private timer?: NodeJS.Timeout;

  /** `retry` is called when a hold ends; `needed` says whether runs wait (then the hold keeps the process alive). */
  constructor(
    opts: Partial<BackoffOptions> | undefined,
    private readonly retry: () => void,
    private readonly needed: () => boolean,
  ) {
    this.o = { ...DEFAULT_BACKOFF, ...opts };
  }

  /** A sandbox died: how many in a row, and how long the next start waits. */
  crashed(): { crashes: number; delayMs: number } {
    const now = Date.now();
    if (now - this.lastCrashAt > this.o.forgetMs) this.crashes = 0;
    this.lastCrashAt = now;
    this.crashes++;
    const delayMs = backoffDelay(this.crashes, this.o);
    this.holdUntil = now + delayMs;
    return { crashes: this.crashes, delayMs };
  }

  /** A run completed: sandboxes live again. */
  succeeded(): void {
    this.crashes = 0;
    this.holdUntil = 0;
  }

  /** Whether a sandbox may start now; if not, `retry` is called when it may. */
  mayStart(): boolean {
    const wait = this.holdUntil - Date.now();
    if (wait <= 0) return true;
    this.timer ??= setTimeout(() => {
      this.timer = undefined;
      this.retry();
    }, wait);
    if (this.needed()) this.timer.ref();
    else this.timer.unref();
    return false;
  }

  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }
}
