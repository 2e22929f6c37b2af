import { Worker } from "node:worker_threads";

/** How often the checkpointer copies each SQLite store's write-ahead log back into its database file. */
export const CHECKPOINT_EVERY_MS = 200;

/**
 * The checkpointer's thread: one connection per store file, a PASSIVE checkpoint of each every
 * CHECKPOINT_EVERY_MS (it copies what no reader still needs and never waits for a lock; the writer
 * keeps appending meanwhile). Plain JavaScript, run with `eval` (no build step for a worker file).
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads");
const Database = require(workerData.betterSqlite3);
const open = new Map();
let timer;
const checkpointAll = () => {
  for (const [file, db] of open) {
    try { db.pragma("wal_checkpoint(PASSIVE)"); } catch (err) {
      // busy: the writer holds the database for a moment (a migration, its own checkpoint); the next turn copies it
      if (!err || (err.code !== "SQLITE_BUSY" && err.code !== "SQLITE_LOCKED")) parentPort.postMessage({ failed: file, message: String(err && err.message) });
    }
  }
};
parentPort.on("message", (msg) => {
  if (msg.add !== undefined) {
    try {
      const db = new Database(msg.add, { fileMustExist: true });
      db.pragma("busy_timeout = 0");
      open.set(msg.add, db);
    } catch (err) { parentPort.postMessage({ failed: msg.add, message: String(err && err.message) }); }
    if (!timer) timer = setInterval(checkpointAll, workerData.everyMs);
  } else if (msg.remove !== undefined) {
    const db = open.get(msg.remove);
    open.delete(msg.remove);
    try { if (db) { db.pragma("wal_checkpoint(PASSIVE)"); db.close(); } } catch {}
    parentPort.postMessage({ removed: msg.remove, id: msg.id });
  }
});
`;

type Pending = { resolve: () => void };

/**
 * Checkpoints of SQLite stores, off the event loop. SQLite copies its write-ahead log into the
 * database file (a checkpoint: ~1000 page copies, and an fsync under synchronous NORMAL) inside
 * the commit that crosses 1000 pages of log: one commit of the event loop's in ~100 took that
 * stall (issue 18: a commit cost ~230 us on average with the automatic checkpoint, ~110 us without,
 * scratch measurement). A store opened with `checkpointer.adopt(file)` turns the automatic one off
 * (`wal_autocheckpoint = 0`); one worker thread for the process checkpoints every adopted file
 * every CHECKPOINT_EVERY_MS instead. The thread does not keep the process alive.
 */
class Checkpointer {
  private worker?: Worker;
  /** Adopted files: how many stores hold each, and what turns their automatic checkpoint back on. */
  private readonly files = new Map<string, { count: number; fallbacks: Set<() => void> }>();
  private readonly removing = new Map<number, Pending>();
  private nextId = 0;

  /**
   * Checkpoints `file` from now on. `fallback` turns the store's automatic checkpoint back on: it is
   * called if the thread fails (stores opened later get a new thread). Counted: a file adopted
   * twice is released twice.
   */
  adopt(file: string, fallback: () => void): void {
    const held = this.files.get(file);
    if (held) {
      held.count++;
      held.fallbacks.add(fallback);
      return;
    }
    this.files.set(file, { count: 1, fallbacks: new Set([fallback]) });
    this.thread().postMessage({ add: file });
  }

  /** Stops checkpointing `file` (a last checkpoint first); resolves once the thread closed its connection. */
  release(file: string, fallback: () => void): Promise<void> {
    const held = this.files.get(file);
    if (!held) return Promise.resolve();
    held.fallbacks.delete(fallback);
    if (--held.count > 0) return Promise.resolve();
    this.files.delete(file);
    const worker = this.worker;
    if (!worker) return Promise.resolve();
    const id = ++this.nextId;
    return new Promise<void>((resolve) => {
      this.removing.set(id, { resolve });
      // The answer is awaited (a store's close): the thread keeps the process alive until it comes,
      // or a script closing its stores one after another would exit before the second.
      worker.ref();
      worker.postMessage({ remove: file, id });
    });
  }

  private thread(): Worker {
    if (this.worker) return this.worker;
    const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { betterSqlite3: require.resolve("better-sqlite3"), everyMs: CHECKPOINT_EVERY_MS } });
    worker.on("message", (msg: { removed?: string; id?: number; failed?: string; message?: string }) => {
      if (msg.id !== undefined) {
        this.removing.get(msg.id)?.resolve();
        this.removing.delete(msg.id);
        if (this.removing.size === 0) worker.unref();
      }
      // A failed checkpoint leaves the log longer; the next one (or the writer's next open) copies it.
      if (msg.failed) process.emitWarning(`storage: checkpoint of ${msg.failed} failed: ${msg.message}`);
    });
    worker.on("error", (err) => process.emitWarning(`storage: the checkpoint thread failed: ${err.message}`));
    // The thread is gone (it failed): its stores go back to SQLite's automatic checkpoint.
    worker.on("exit", () => {
      this.worker = undefined;
      for (const held of this.files.values()) for (const fallback of held.fallbacks) fallback();
      this.files.clear();
      for (const pending of this.removing.values()) pending.resolve();
      this.removing.clear();
    });
    // After the listeners: a "message" listener refs the worker's port again, and the thread
    // must never keep the process alive (a bench or a script would never exit).
    worker.unref();
    this.worker = worker;
    return worker;
  }
}

/** The process's one checkpointer. */
export const checkpointer = new Checkpointer();
