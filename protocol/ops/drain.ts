/**
 * Graceful shutdown of an HTTP service (both services): once `stop` is called, the listening socket
 * closes (no new connections), requests arriving on open connections answer 503 `shutting_down`,
 * and the requests and tracked work already under way get until the deadline to finish. Past it,
 * every request still unanswered answers 503 `shutting_down` (a clear error instead of a reset
 * socket) and the caller ends the work itself (e.g. stops the sandboxes), then waits for `settled`.
 */
import type { Server } from "node:http";
import type { RequestHandler, Response } from "express";
import { AppError, errorBodyOf } from "../errors";

const stoppingError = () => new AppError(503, "shutting_down", "the service is stopping and takes no new work; retry shortly (another replica may answer)", undefined, { "retry-after": "5" });

/** The answer of a request the deadline cut short: unlike a refusal on arrival, its work may have been done in part. */
export const INTERRUPTED_MESSAGE =
  "the service stopped while this request was under way: part of its work may have been done (an action may have had effects, and is charged the seconds it ran; a write may still land); check its outcome before you retry";
const interruptedError = () => new AppError(503, "interrupted", INTERRUPTED_MESSAGE);

/**
 * Resolves on the process's first SIGINT or SIGTERM, listening from this call on. A service's main
 * calls it before it prints where it listens: whoever reads that line may stop it at once, and a
 * SIGTERM with no listener yet kills the process (no drain, a signal instead of exit 0).
 */
export const stopSignal = (): Promise<void> =>
  new Promise((resolve) => {
    process.once("SIGINT", () => resolve());
    process.once("SIGTERM", () => resolve());
  });

export class Drain {
  private stoppingSince?: number;
  private readonly open = new Set<Response>();
  private readonly work = new Set<Promise<unknown>>();

  get stopping(): boolean {
    return this.stoppingSince !== undefined;
  }

  /** Middleware (early in the chain): refuses new requests once stopping, and tracks the others until answered. */
  middleware(): RequestHandler {
    return (_req, res, next) => {
      if (this.stopping) return void Drain.refuse(res);
      this.open.add(res);
      res.once("close", () => this.open.delete(res));
      next();
    };
  }

  /** Tracks one unit of work (a run, a relayed write) that must end, and be accounted for, before the process exits. */
  track<T>(work: Promise<T>): Promise<T> {
    const tracked = work.finally(() => this.work.delete(tracked));
    this.work.add(tracked);
    tracked.catch(() => undefined);
    return tracked;
  }

  /** Units of work and requests under way. */
  inFlight(): { requests: number; work: number } {
    return { requests: this.open.size, work: this.work.size };
  }

  /**
   * Stops `server` accepting and waits until nothing is under way or `deadlineMs` passed; then
   * answers every request still open with 503 shutting_down. Resolves true when all finished in time.
   */
  async stop(server: Server, deadlineMs: number): Promise<boolean> {
    this.stoppingSince ??= Date.now();
    server.close();
    server.closeIdleConnections();
    const deadline = Date.now() + deadlineMs;
    while ((this.open.size || this.work.size) && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, Math.min(50, Math.max(1, deadline - Date.now()))));
      server.closeIdleConnections(); // connections that finished their request while we waited
    }
    const finished = this.open.size === 0 && this.work.size === 0;
    for (const res of this.open) if (!res.headersSent) Drain.answer(res, interruptedError());
    return finished;
  }

  /** Resolves when the tracked work has ended, or after `ms`. */
  async settled(ms: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([Promise.allSettled([...this.work]), new Promise((r) => (timer = setTimeout(r, ms)))]);
    clearTimeout(timer);
  }

  private static refuse(res: Response): void {
    Drain.answer(res, stoppingError());
  }

  private static answer(res: Response, e: AppError): void {
    res.set({ ...e.headers, connection: "close" }).status(e.status).json(errorBodyOf(e));
  }
}
