import { Transaction, Wallet, type JsonRpcProvider, type TransactionReceipt, type TransactionRequest } from "ethers";
import type { Logger } from "pino";
import { AppError } from "../errors";
import { CHAIN_RETRY_AFTER_SECONDS, chainOutage } from "../../protocol/chainErrors";
import { defaultFairShare, FairQueue, type QueueBound } from "../../executor/sandbox/host/fair-queue";
import type { RunOwner } from "../../executor/sandbox/types";
import { BlockWatch } from "./blockWatch";
import { bumpedFees, DEFAULT_PAYER_WATCH, maxReplacements, offeredPrice, readPayer, replacedWorstPrice, type PayerHealth, type PayerWatch } from "./payerWatch";

/** A payer wallet: its next nonce (null: read it from the chain's pending count), whether it is sending, and its last check. */
type Payer = { wallet: Wallet; nonce: number | null; busy: boolean; active: boolean; balance: bigint | null; pending: number };
type Decode = (err: unknown) => unknown;
/** Sends one transaction from the payer wallet a write was given, and resolves with its receipt once mined. */
/** `onSigned`: told the hash of the signed transaction before it is broadcast (the broadcast waits for it). */
export type OnSigned = (hash: string) => void | Promise<void>;
export type Sender = (tx: TransactionRequest, decode?: Decode, onSigned?: OnSigned) => Promise<TransactionReceipt>;
type Job = { owner: RunOwner; start: (payer: Payer) => Promise<void> };

/**
 * Whose write it is, for the payers' fair share: the billing payer of the acting key's account (see
 * relayWrite); a new account's write is the asking client's.
 */
export type WriteOwner = RunOwner;

/** A write's place in the payers' queue (PayerPool.admit): run it once, or release it. */
export type WritePlace = {
  /** Runs `work` once it is this write's turn, with a payer wallet of its own until `work` settles: `send` sends from it. */
  run<T>(work: (send: Sender) => Promise<T>): Promise<T>;
  release(): void;
};

/**
 * A write that never reached the chain: its transaction was signed but not delivered (the node
 * refused the connection, or did not know it afterwards). Nothing landed and nothing is billed.
 */
export class TxNotSent extends AppError {
  constructor(message: string) {
    super(503, "chain_unavailable", `${message}; nothing was sent, try again`, undefined, { "retry-after": String(CHAIN_RETRY_AFTER_SECONDS) });
  }
}

/**
 * A pool of payer wallets. Each payer sends one transaction at a time, the next once the previous
 * one is mined, with a nonce kept locally and read back from the chain at start and after any send
 * error. Writes wait for a free payer in a fair queue by who pays for them (fair-queue.ts): billing
 * payers take turns (a newcomer ahead of a flood it finds sending), then a payer's accounts, and
 * each may keep `queuePerPayer` writes waiting (429 write_queue_full past it, or past the queue's
 * total, before anything is simulated, with a Retry-After from the measured time of a write). A
 * write is simulated, priced and sent in its turn, with its wallet: one account's flood of writes
 * reaches the chain no faster than the wallets send, and holds another's for about one write.
 */
export class PayerPool {
  private readonly payers: Payer[];
  private readonly queue: FairQueue<Job>;
  /** Recent time of a write's turn, from its start to its end (ms, moving average), for Retry-After. */
  private writeMs = 2_000;
  /** New blocks, polled once for every payer waiting for a receipt. */
  private readonly blocks: BlockWatch;

  constructor(
    keys: string[],
    private readonly provider: JsonRpcProvider,
    private readonly logger: Logger,
    private readonly txTimeoutMs: number,
    receiptPollMs = 100,
    queuePerPayer = 64,
    private readonly watch: PayerWatch = DEFAULT_PAYER_WATCH,
  ) {
    this.blocks = new BlockWatch(provider, receiptPollMs);
    this.payers = keys.map((k) => ({ wallet: new Wallet(k, provider), nonce: null, busy: false, active: true, balance: null, pending: 0 }));
    // Every wallet may serve one billing payer when no one else waits (a write holds one for a block
    // or so): fairness comes from the turns, and a newcomer waits for about one write.
    this.queue = new FairQueue(defaultFairShare(this.payers.length, { perPayer: this.payers.length, queuePerPayer }));
  }

  addresses(): string[] {
    return this.payers.map((p) => p.wallet.address);
  }

  /**
   * Checks the payers now, then every `watch.checkMs` until `signal`: a payer under
   * `watch.minBalanceWei` is taken out of the pool (a warning) and comes back once funded (a notice).
   */
  async start(signal: AbortSignal): Promise<void> {
    await this.check();
    let timer: NodeJS.Timeout | undefined;
    const tick = () => void this.check().finally(() => (signal.aborted ? undefined : (timer = setTimeout(tick, this.watch.checkMs))));
    if (!signal.aborted) timer = setTimeout(tick, this.watch.checkMs);
    signal.addEventListener("abort", () => clearTimeout(timer), { once: true });
  }

  /** Reads each payer's balance and pending transactions; a payer whose read fails keeps its state. */
  async check(): Promise<void> {
    await Promise.all(
      this.payers.map(async (p) => {
        const seen = await readPayer(this.provider, p.wallet.address).catch(() => undefined);
        if (!seen) return;
        [p.balance, p.pending] = [seen.balance, seen.pending];
        const funded = seen.balance >= this.watch.minBalanceWei;
        if (funded === p.active) return;
        p.active = funded;
        const detail = { payer: p.wallet.address, balanceWei: seen.balance.toString(), minBalanceWei: this.watch.minBalanceWei.toString() };
        if (funded) this.logger.info(detail, "payer funded again: back in the pool");
        else this.logger.warn(detail, "payer balance under VESTA_PAYER_MIN_BALANCE_WEI: taken out of the pool until funded");
      }),
    );
    this.dispatch();
  }

  /** Each payer's state at its last check (metrics, readiness). */
  health(): PayerHealth[] {
    return this.payers.map((p) => ({ address: p.wallet.address, active: p.active, balance: p.balance, pending: p.pending }));
  }

  /** Payers sending a write now, and writes waiting for one. */
  stats(): { sending: number; waiting: number } {
    return { sending: this.payers.filter((p) => p.busy).length, waiting: this.queue.waiting };
  }

  /**
   * Holds a place for one write of `owner`, before anything is done for it: throws 429
   * write_queue_full when the owner's payer (or account) has its share sending and its queue full.
   */
  admit(owner: WriteOwner): WritePlace {
    if (!this.payers.some((p) => p.active)) {
      throw new AppError(503, "payers_unfunded", "every payer wallet of the service is under its minimum balance; nothing was sent; the operator has been told, retry later", undefined, { "retry-after": "60" });
    }
    const hold = this.queue.hold(owner);
    if (typeof hold === "string") throw this.queueFull(owner, hold);
    return {
      run: <T>(work: (send: Sender) => Promise<T>) =>
        new Promise<T>((resolve, reject) => {
          const start = (payer: Payer) => work((tx, decode, onSigned) => this.sendNow(payer, tx, decode, onSigned)).then(resolve, reject);
          this.queue.enqueue(hold, { owner, start });
          this.dispatch();
        }),
      release: () => this.queue.release(hold),
    };
  }

  /**
   * The highest price per gas a transaction sent at `price` may pay once replaced (payerWatch.ts,
   * replacedWorstPrice): what a write reserves per gas, and what its replacements never pass.
   */
  worstPriceOf(price: bigint): bigint {
    return replacedWorstPrice(price, this.watch.feeBumpPercent, maxReplacements(this.watch, this.txTimeoutMs));
  }

  /**
   * Sends `tx` from a free payer once it is `owner`'s turn and resolves with its receipt once mined.
   * `decode` turns a send error that carries revert data (some nodes, Hardhat's among them, mine a
   * reverting transaction and report the revert at send time) into the answer to give. `onSigned`
   * hears the hash of each signed transaction before it is broadcast (billing records it, to find its
   * cost). A transaction that surely did not reach the chain rejects with TxNotSent.
   */
  send(tx: TransactionRequest, decode?: Decode, onSigned?: OnSigned, owner: WriteOwner = { account: "-", key: "-" }): Promise<TransactionReceipt> {
    try {
      return this.admit(owner).run((send) => send(tx, decode, onSigned));
    } catch (err) {
      return Promise.reject(err);
    }
  }

  /**
   * Sends `tx` from `wallet`, a wallet that is not a payer (an identity's owner wallet, see
   * relayer/chain/ownerSend.ts), with the payers' send path (nonce from the chain, delivery checks,
   * receipt). The caller sends one transaction of a wallet at a time.
   */
  sendFrom(wallet: Wallet, tx: TransactionRequest, decode?: Decode, onSigned?: OnSigned): Promise<TransactionReceipt> {
    return this.sendNow({ wallet: wallet.connect(this.provider), nonce: null, busy: true, active: true, balance: null, pending: 0 }, tx, decode, onSigned);
  }

  private dispatch(): void {
    for (const payer of this.payers) {
      if (payer.busy || !payer.active) continue;
      const job = this.queue.take();
      if (!job) return;
      payer.busy = true;
      const started = Date.now();
      void job.start(payer).finally(() => {
        payer.busy = false;
        this.writeMs = 0.8 * this.writeMs + 0.2 * (Date.now() - started);
        this.queue.finished(job);
        this.dispatch();
      });
    }
  }

  /** 429 write_queue_full, with Retry-After: about as long as the writes ahead take, spread over the payer wallets. */
  private queueFull(owner: WriteOwner, bound: QueueBound): AppError {
    const share = this.queue.share;
    const ahead = bound === "total" ? this.queue.length : this.queue.queuedFor(owner, bound);
    const retryAfter = Math.min(60, Math.max(1, Math.ceil((ahead * this.writeMs) / this.payers.length / 1000)));
    const who =
      bound === "total"
        ? `the relay queue is full (${share.queueTotal} writes waiting)`
        : `the writes billed to this payer already fill its share (${share.perPayer} sending, ${share.queuePerPayer} waiting: VESTA_WRITE_QUEUE_PER_PAYER)`;
    return new AppError(429, "write_queue_full", `${who}; nothing was sent, retry in ${retryAfter} s`, { bound }, { "retry-after": String(retryAfter) });
  }

  private async sendNow(payer: Payer, tx: TransactionRequest, decode?: (err: unknown) => unknown, onSigned?: OnSigned, retried = false): Promise<TransactionReceipt> {
    if (payer.nonce === null) payer.nonce = await this.provider.getTransactionCount(payer.wallet.address, "pending");
    let hash: string | undefined;
    let populated: TransactionRequest | undefined;
    try {
      populated = await payer.wallet.populateTransaction({ ...tx, nonce: payer.nonce });
      const signed = await payer.wallet.signTransaction(populated);
      hash = Transaction.from(signed).hash!;
      await onSigned?.(hash);
      await this.provider.broadcastTransaction(signed);
      payer.nonce++;
    } catch (err) {
      payer.nonce = null; // read it back from the chain next time
      const decoded = decode?.(err);
      if (decoded instanceof AppError) throw decoded;
      const msg = (err as Error).message ?? "";
      if (!retried && /nonce|replacement/i.test(msg)) return this.sendNow(payer, tx, decode, onSigned, true);
      this.logger.warn({ err: msg.slice(0, 500), payer: payer.wallet.address }, "sending a transaction failed");
      await this.unlessDelivered(err, hash);
    }
    return this.receiptOf(payer, hash!, populated!, onSigned);
  }

  /**
   * After a failed broadcast of `hash` (undefined: it was never signed): throws TxNotSent when the
   * transaction surely did not reach the chain (the connection was refused, the node answered with
   * an error, or it does not know the transaction); returns when the node has it (only its answer
   * was lost), so the caller waits for it as for any transaction; throws chain_timeout (it may still
   * land) when that cannot be told.
   */
  private async unlessDelivered(err: unknown, hash: string | undefined): Promise<void> {
    const outage = chainOutage(err);
    if (hash === undefined && !outage) throw err; // not the chain's doing
    if (hash === undefined || outage?.delivered === "no") throw new TxNotSent("the transaction could not be sent to the chain (its RPC node did not answer)");
    if (!outage) throw new TxNotSent("the chain refused the transaction");
    const known = await this.provider.getTransaction(hash).then(
      (t) => t !== null,
      () => undefined,
    );
    if (known === false) throw new TxNotSent("the transaction did not reach the chain (its RPC node failed while it was sent)");
    if (known === undefined) throw new AppError(504, "chain_timeout", `the chain's RPC node failed while transaction ${hash} was sent; it may still land: check before you retry`);
  }

  private async receiptOf(payer: Payer, hash: string, sent: TransactionRequest, onSigned?: OnSigned): Promise<TransactionReceipt> {
    const receipt = await this.waitForReceipt(payer, [hash], sent, onSigned);
    if (!receipt) {
      payer.nonce = null;
      throw new AppError(504, "chain_timeout", `transaction ${hash} was not mined within ${this.txTimeoutMs} ms; it may still land`);
    }
    return receipt;
  }

  /**
   * Reads the receipt of any of `hashes` (the transaction and its replacements) now, then again each
   * time a new block is seen (BlockWatch: one block-number poll every VESTA_RECEIPT_POLL_MS for all
   * payers). (ethers' waitForTransaction compares against a cached block number and waits for its
   * next block poll, ~4 s; under automine it can miss the only block and hang.) A transaction still
   * not mined `watch.replaceAfterMs` after its last send is replaced (replace).
   */
  private async waitForReceipt(payer: Payer, hashes: string[], sent: TransactionRequest, onSigned?: OnSigned): Promise<TransactionReceipt | null> {
    const deadline = Date.now() + this.txTimeoutMs;
    const cap = this.worstPriceOf(offeredPrice(sent)); // what the write reserved per gas: no replacement offers more
    let lastSend = Date.now();
    for (;;) {
      const seen = this.blocks.latest; // a block holding it comes after the head read next
      for (const h of hashes) {
        const receipt = await this.provider.getTransactionReceipt(h).catch(() => null);
        if (receipt) return receipt;
      }
      if (Date.now() >= deadline) return null;
      if (Date.now() - lastSend >= this.watch.replaceAfterMs) {
        const replaced = await this.replace(payer, sent, cap, onSigned);
        lastSend = Date.now();
        if (replaced) [sent, hashes] = [replaced.tx, [...hashes, replaced.hash]];
      }
      await this.blocks.next(seen, Math.min(deadline, lastSend + this.watch.replaceAfterMs) - Date.now());
    }
  }

  /**
   * Sends the replacement of `sent` (same nonce, fees raised by `watch.feeBumpPercent` and at least
   * what the chain asks now). Resolves undefined when the node refuses it (the original was mined
   * meanwhile, or the raise is not enough for it): waiting goes on for what was sent.
   */
  private async replace(payer: Payer, sent: TransactionRequest, cap: bigint, onSigned?: OnSigned): Promise<{ tx: TransactionRequest; hash: string } | undefined> {
    try {
      const fees = bumpedFees(sent, this.watch.feeBumpPercent, await this.provider.getFeeData(), cap);
      if (!fees) {
        this.logger.warn({ payer: payer.wallet.address, nonce: sent.nonce, capWeiPerGas: cap.toString() }, "a transaction was not mined in time, and its fees already reach what was reserved for it: not replaced; still waiting for it");
        return undefined;
      }
      const tx = { ...sent, ...fees };
      const signed = await payer.wallet.signTransaction(tx);
      const hash = Transaction.from(signed).hash!;
      await onSigned?.(hash); // recorded before it is broadcast, as the first
      await this.provider.broadcastTransaction(signed);
      this.logger.warn({ payer: payer.wallet.address, nonce: sent.nonce, hash }, "a transaction was not mined in time: replaced with higher fees (same nonce)");
      return { tx, hash };
    } catch (err) {
      this.logger.warn({ err: String((err as Error).message ?? err).slice(0, 300), payer: payer.wallet.address, nonce: sent.nonce }, "replacing a slow transaction failed; still waiting for it");
      return undefined;
    }
  }
}
