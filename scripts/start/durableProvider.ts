/**
 * The local chain's provider, made durable: every call that changes the chain (a transaction, a
 * mined block, a node setting that changes what the next blocks hold) runs alone, and its answer
 * is returned only once the blocks it made, and what else must be replayed, are in the journal on
 * disk (fdatasync). Reads wait while a change is being journaled, and subscription notifications
 * are held until then: nobody, not the caller, not a receipt poller, not a log scanner, sees a block
 * that a `kill -9` could still take back. Calls that cannot be replayed (hardhat_reset, evm_revert,
 * impersonation, ...) are refused with a message saying why. Interval mining is run here (not by
 * the node's own timer) so that its blocks are journaled like every other.
 */
import type { EIP1193Provider, RequestArguments } from "hardhat/types";
import { ProviderWrapper } from "hardhat/internal/core/providers/wrapper";
import { InvalidInputError } from "hardhat/internal/core/providers/errors";
import { frame, MAX_RECORD_BYTES, type JournalFile } from "./journal";
import { blockRecords, rawFromRpc, txHash, type JournalRecord, type Request } from "./records";
import { checkInterval, intervalMs, mineCount, MAX_MINE_BLOCKS, type MiningInterval, refusal, REPLAYED_SETTERS } from "./methods";
import { RwLock } from "./rwLock";
import { TraceMemory } from "./traceMemory";

type Listener = (...args: unknown[]) => void;
/** Events the node emits for subscriptions (eth_subscribe): held while a change is not yet on disk. */
const NOTIFICATIONS = new Set(["notification", "message"]);
const CHANGES = new Set(["eth_sendRawTransaction", "eth_sendTransaction", "evm_mine", "hardhat_mine", ...REPLAYED_SETTERS]);

export class DurableProvider extends ProviderWrapper {
  private readonly lock = new RwLock();
  /** Raw bytes of transactions sent, by hash, until a journaled block holds them. */
  private readonly sent = new Map<string, string>();
  /** Notifications emitted during the change being journaled. */
  private held?: Array<() => void>;
  private readonly wrapped = new Map<string, Map<Listener, Listener>>();
  private broken?: Error;
  private timer?: NodeJS.Timeout;
  private closed = false;
  /** Collects the execution records EDR keeps after calls that executed EVM code (./traceMemory.ts). */
  private readonly traces = new TraceMemory();

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
    const params = this._getParams(args);
    const refused = refusal(args.method);
    if (refused) throw new InvalidInputError(`${args.method} is not available on npm start's durable chain: ${refused}`);
    if (args.method === "hardhat_mine" && mineCount(params[0]) > MAX_MINE_BLOCKS) {
      throw new InvalidInputError(`hardhat_mine journals every block it mines: at most ${MAX_MINE_BLOCKS} in one call on npm start's durable chain`);
    }
    if (REPLAYED_SETTERS.has(args.method) && Buffer.byteLength(JSON.stringify(params)) > MAX_RECORD_BYTES / 2) {
      throw new InvalidInputError(`${args.method}'s parameters are too large to journal (at most ${MAX_RECORD_BYTES / 2} bytes as JSON)`);
    }
    if (CHANGES.has(args.method)) return this.change(args.method, params);
    return this.lock.read(() => this.timed(args.method, () => this._wrappedProvider.request(args)));
  }

  /** Runs one request of the node and counts its time towards collecting what it kept (./traceMemory.ts). */
  private async timed<T>(method: string, fn: () => Promise<T>): Promise<T> {
    const t0 = performance.now();
    try {
      return await fn();
    } finally {
      this.traces.after(method, performance.now() - t0);
    }
  }

  /** Runs one change alone and answers once the journal holds it; if it failed, after journaling what it still did. */
  private change(method: string, params: unknown[]): Promise<unknown> {
    return this.exclusive(async () => {
      const recs: JournalRecord[] = [];
      let sentHash: string | undefined;
      if (method === "eth_sendRawTransaction" && typeof params[0] === "string" && /^0x[0-9a-fA-F]+$/.test(params[0])) {
        sentHash = txHash(params[0]);
        this.sent.set(sentHash, params[0]);
      }
      let result: unknown, error: unknown, failed = false;
      try {
        result = method === "evm_setIntervalMining" ? this.setInterval(params[0]) : await this.timed(method, () => this.inner(method, params));
      } catch (err) {
        [error, failed] = [err, true];
      }
      const hash = typeof result === "string" && method.startsWith("eth_send") ? result : sentHash;
      if (hash) recs.push(...(await this.pending(hash)));
      if (!failed && REPLAYED_SETTERS.has(method)) recs.push({ k: "rpc", method, params });
      await this.journalTo(recs);
      if (failed) throw error;
      return result;
    });
  }

  /** Appends a record of this process's own (the deployment) after every block so far; resolves once on disk. */
  record(rec: JournalRecord): Promise<void> {
    return this.exclusive(() => this.journalTo([rec]));
  }

  private exclusive<T>(fn: () => Promise<T>): Promise<T> {
    return this.lock.write(async () => {
      if (this.broken) throw this.broken;
      if (this.closed) throw new InvalidInputError("the chain is stopping");
      this.held = [];
      try {
        return await fn();
      } finally {
        const held = this.held;
        this.held = undefined;
        for (const deliver of held) deliver();
      }
    });
  }

  /** Journals every block up to the head, then `recs`; a failure stops all further changes. */
  private async journalTo(recs: JournalRecord[]): Promise<void> {
    try {
      const latest = Number(await this.inner("eth_blockNumber"));
      const blocks = latest > this.head ? await blockRecords(this.inner, this.head + 1, latest, this.sent) : [];
      const frames = [...blocks, ...recs].map(frame);
      if (frames.length) await this.journal.append(frames);
      this.head = latest;
    } catch (err) {
      this.broken = new Error(`the chain journal could not be written (${err instanceof Error ? err.message : String(err)}): the chain accepts no more changes; stop and start npm start again (what was acknowledged before is kept)`);
      this.onFatal(this.broken);
      throw this.broken;
    }
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

  private setInterval(v: unknown): true {
    this.interval = checkInterval(v);
    this.schedule();
    return true;
  }

  /** Mines on the configured interval, as a change, so that the block is journaled. */
  private schedule(): void {
    clearTimeout(this.timer);
    const ms = intervalMs(this.interval);
    if (!ms || this.closed) return;
    this.timer = setTimeout(() => {
      this.change("evm_mine", []).then(
        () => this.schedule(),
        (err) => this.broken || this.closed || this.onFatal(err instanceof Error ? err : new Error(String(err))),
      );
    }, ms);
  }

  public addListener(event: string, listener: Listener): this {
    if (!NOTIFICATIONS.has(event)) return super.addListener(event, listener);
    const held: Listener = (...args) => (this.held ? this.held.push(() => listener(...args)) : listener(...args));
    if (!this.wrapped.has(event)) this.wrapped.set(event, new Map());
    this.wrapped.get(event)!.set(listener, held);
    return super.addListener(event, held);
  }

  public on(event: string, listener: Listener): this {
    return this.addListener(event, listener);
  }

  public removeListener(event: string, listener: Listener): this {
    const held = this.wrapped.get(event)?.get(listener);
    this.wrapped.get(event)?.delete(listener);
    return super.removeListener(event, held ?? listener);
  }

  public off(event: string, listener: Listener): this {
    return this.removeListener(event, listener);
  }

  /** Stops mining, waits for the change being journaled, closes the journal. */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    await this.lock.write(() => this.journal.close());
  }
}
