/** The real timers behind the guest's setTimeout/setInterval (guest/timers.js), bounded per run. */
import type { QuickJSContext, QuickJSDeferredPromise, QuickJSHandle } from "quickjs-emscripten";

const MAX_TIMERS = 1000;

export class GuestTimers {
  private readonly pending = new Map<number, { timer: NodeJS.Timeout; deferred: QuickJSDeferredPromise }>();

  /** `fired` runs after a timer resolved its promise (or with the error when resolving failed). */
  constructor(
    private readonly ctx: QuickJSContext,
    private readonly deadline: number,
    private readonly fired: (err?: unknown) => void,
  ) {}

  get size(): number {
    return this.pending.size;
  }

  /** A promise handle resolved after `ms` (never later than just past the deadline). */
  sleep(id: number, ms: number): QuickJSHandle {
    if (this.pending.size >= MAX_TIMERS) throw new RangeError(`too many pending timers (at most ${MAX_TIMERS})`);
    if (this.pending.has(id)) throw new RangeError(`timer ${id} is already pending`);
    const deferred = this.ctx.newPromise();
    const delay = Math.min(Math.max(0, ms), Math.max(0, this.deadline - Date.now()) + 1);
    const timer = setTimeout(() => {
      this.pending.delete(id);
      try {
        deferred.resolve();
      } catch (err) {
        return this.fired(err);
      } finally {
        deferred.dispose();
      }
      this.fired();
    }, delay);
    this.pending.set(id, { timer, deferred });
    return deferred.handle;
  }

  cancel(id: number): void {
    const entry = this.pending.get(id);
    if (!entry) return;
    clearTimeout(entry.timer);
    entry.deferred.dispose();
    this.pending.delete(id);
  }

  /** Stops every real timer (the run is over). */
  stop(): void {
    for (const { timer } of this.pending.values()) clearTimeout(timer);
  }

  /** Frees the promise handles (before the context is disposed). */
  dispose(): void {
    for (const { deferred } of this.pending.values()) deferred.dispose();
    this.pending.clear();
  }
}
