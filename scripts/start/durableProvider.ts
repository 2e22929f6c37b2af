/**
 * The local chain's provider, made durable: every call that changes the chain (a transaction, a
 * mined block, a node setting that changes what the next blocks hold) runs one at a time, and its
 * answer is returned only once the blocks it made, and what else must be replayed, are in the
 * journal on disk. Journal writes are grouped: while one batch is being fdatasync'ed the next call
 * already runs. Calls that cannot be replayed (hardhat_reset, evm_revert, impersonation, ...) are
 * refused with a message saying why. Interval mining is run here (not by the node's own timer) so
 * that its blocks are journaled like every other.
 */
import type { EIP1193Provider, RequestArguments } from "hardhat/types";
import { ProviderWrapper } from "hardhat/internal/core/providers/wrapper";
import { InvalidInputError } from "hardhat/internal/core/providers/errors";
import { frame, type JournalFile } from "./journal";
import { blockRecords, rawFromRpc, txHash, type JournalRecord, type Request } from "./records";
import { intervalMs, MAX_MINE_BLOCKS, type MiningInterval, REFUSED, REPLAYED_SETTERS } from "./methods";

type Mark = { upto: number; recs: JournalRecord[]; resolve: () => void; reject: (err: Error) => void };
type Outcome = { durable: Promise<void>; result?: unknown; error?: unknown; failed: boolean };

export class DurableProvider extends ProviderWrapper {
  private lock: Promise<unknown> = Promise.resolve();
  /** Raw bytes of transactions sent, by hash, until a journaled block holds them. */
  private readonly sent = new Map<string, string>();
  private readonly marks: Mark[] = [];
  private flushing?: Promise<void>;
  private broken?: Error;
  private timer?: NodeJS.Timeout;
  private closed = false;

  constructor(
    inner: EIP1193Provider,
    private readonly journal: JournalFile,
    /** The last block already in the journal. */
    private head: number,
    private interval: MiningInterval,
    private readonly onFatal: (err: Error) => void,
  ) {
    super(inner);
    this.schedule();
  }

  private readonly inner: Request = (method, params = []) => this._wrappedProvider.request({ method, params });

  public async request(args: RequestArguments): Promise<unknown> {
    const method = args.method;
    const refused = REFUSED[method] ?? (/^(hardhat|evm)_set/.test(method) && !REPLAYED_SETTERS.has(method) && !PASS_SETTERS.has(method) ? "it is not journaled" : undefined);
    if (refused) throw new InvalidInputError(`${method} is not available on npm start's durable chain: ${refused}`);
    const params = this._getParams(args);
    if (method === "hardhat_mine" && mineCount(params[0]) > MAX_MINE_BLOCKS) {
      throw new InvalidInputError(`hardhat_mine journals every block it mines: at most ${MAX_MINE_BLOCKS} in one call on npm start's durable chain`);
    }
    if (method === "eth_sendRawTransaction" || method === "eth_sendTransaction" || method === "evm_mine" || method === "hardhat_mine" || REPLAYED_SETTERS.has(method)) {
      return this.write(method, params);
    }
    return this._wrappedProvider.request(args);
  }

  /** Runs one changing call in turn, queues its journal records in that order, and answers once they are on disk. */
  private async write(method: string, params: unknown[]): Promise<unknown> {
    const outcome: Outcome = await this.exclusive(async () => {
      if (this.broken) throw this.broken;
      if (this.closed) throw new InvalidInputError("the chain is stopping");
      const recs: JournalRecord[] = [];
      let sentHash: string | undefined;
      if (method === "eth_sendRawTransaction" && typeof params[0] === "string" && /^0x[0-9a-fA-F]+$/.test(params[0])) {
        sentHash = txHash(params[0]);
        this.sent.set(sentHash, params[0]);
      }
      let result: unknown, error: unknown, failed = false;
      try {
        if (method === "evm_setIntervalMining") {
          this.interval = checkInterval(params[0]);
          result = true;
        } else {
          result = await this.inner(method, params);
        }
      } catch (err) {
        [error, failed] = [err, true];
      }
      const hash = typeof result === "string" && method.startsWith("eth_send") ? result : sentHash;
      if (hash) recs.push(...(await this.pending(hash)));
      if (!failed && REPLAYED_SETTERS.has(method)) recs.push({ k: "rpc", method, params });
      if (method === "evm_setIntervalMining" && !failed) this.schedule();
      const upto = Number(await this.inner("eth_blockNumber"));
      return { durable: this.mark(upto, recs), result, error, failed };
    });
    await outcome.durable;
    if (outcome.failed) throw outcome.error;
    return outcome.result;
  }

  /** Appends a record of this process's own (the deployment) after every block so far; resolves once on disk. */
  async record(rec: JournalRecord): Promise<void> {
    const outcome = await this.exclusive(async () => {
      if (this.broken) throw this.broken;
      return { durable: this.mark(Number(await this.inner("eth_blockNumber")), [rec]) };
    });
    await outcome.durable;
  }

  /** A sent transaction the node knows but has not mined yet is journaled as pending; one it does not know is forgotten. */
  private async pending(hash: string): Promise<JournalRecord[]> {
    const t = await this.inner("eth_getTransactionByHash", [hash]);
    if (!t) {
      this.sent.delete(hash);
      return [];
    }
    return t.blockNumber === null ? [{ k: "tx", hash, raw: this.sent.get(hash) ?? rawFromRpc(t) }] : [];
  }

  private exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.lock.then(fn);
    this.lock = run.catch(() => undefined);
    return run;
  }

  private mark(upto: number, recs: JournalRecord[]): Promise<void> {
    return new Promise((resolve, reject) => {
      this.marks.push({ upto, recs, resolve, reject });
      this.flushing ??= this.flush().finally(() => (this.flushing = undefined));
    });
  }

  private async flush(): Promise<void> {
    while (this.marks.length) {
      const batch = this.marks.splice(0);
      try {
        const frames: Buffer[] = [];
        for (const m of batch) {
          if (m.upto > this.head) {
            for (const b of await blockRecords(this.inner, this.head + 1, m.upto, this.sent)) frames.push(frame(b));
            this.head = m.upto;
          }
          for (const r of m.recs) frames.push(frame(r));
        }
        if (frames.length) await this.journal.append(frames);
        for (const m of batch) m.resolve();
      } catch (err) {
        if (!this.broken) {
          this.broken = new Error(`the chain journal could not be written (${err instanceof Error ? err.message : String(err)}): the chain accepts no more changes; stop and start npm start again (what was acknowledged before is kept)`);
          this.onFatal(this.broken);
        }
        for (const m of batch) m.reject(this.broken);
      }
    }
  }

  /** Mines on the configured interval, through `write`, so that the block is journaled. */
  private schedule(): void {
    clearTimeout(this.timer);
    const ms = intervalMs(this.interval);
    if (!ms || this.closed) return;
    this.timer = setTimeout(() => {
      this.write("evm_mine", []).then(
        () => this.schedule(),
        (err) => this.broken || this.closed || this.onFatal(err instanceof Error ? err : new Error(String(err))),
      );
    }, ms);
  }

  /** Stops mining, waits for the last journal writes, closes the journal. */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    await this.lock;
    await this.flushing;
    await this.journal.close();
  }
}

/** Settings that only move the clock or the node's logging: nothing to replay (block timestamps are journaled). */
const PASS_SETTERS = new Set(["evm_setNextBlockTimestamp", "hardhat_setLoggingEnabled", "hardhat_setLedgerOutputEnabled"]);

/** hardhat_mine's block count (a quantity, 1 when absent); anything unreadable counts as too many. */
function mineCount(v: unknown): number {
  if (v === undefined || v === null) return 1;
  try {
    return Number(BigInt(v as string));
  } catch {
    return Infinity;
  }
}

function checkInterval(v: unknown): MiningInterval {
  const ok = (n: unknown) => typeof n === "number" && Number.isInteger(n) && n >= 0;
  if (v === false || v === null) return 0;
  if (ok(v) || (Array.isArray(v) && v.length === 2 && ok(v[0]) && ok(v[1]) && v[0] <= v[1])) return v as MiningInterval;
  throw new InvalidInputError("evm_setIntervalMining takes a number of milliseconds (0: off) or [min, max]");
}
