import { Transaction, Wallet, type JsonRpcProvider, type TransactionReceipt, type TransactionRequest } from "ethers";
import type { Logger } from "pino";
import { AppError } from "../errors";
import { CHAIN_RETRY_AFTER_SECONDS, chainOutage } from "../../protocol/chainErrors";
import { defaultFairShare, FairQueue, type QueueBound } from "../../executor/sandbox/host/fair-queue";
import type { RunOwner } from "../../executor/sandbox/types";

type Payer = { wallet: Wallet; nonce: number | null; busy: boolean };
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

  constructor(
    keys: string[],
    private readonly provider: JsonRpcProvider,
    private readonly logger: Logger,
    private readonly txTimeoutMs: number,
    private readonly receiptPollMs = 100,
    queuePerPayer = 64,
  ) {
    this.payers = keys.map((k) => ({ wallet: new Wallet(k, provider), nonce: null, busy: false }));
    // Every wallet may serve one billing payer when no one else waits (a write holds one for a block
    // or so): fairness comes from the turns, and a newcomer waits for about one write.
    this.queue = new FairQueue(defaultFairShare(this.payers.length, { perPayer: this.payers.length, queuePerPayer }));
  }

  addresses(): string[] {
    return this.payers.map((p) => p.wallet.address);
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
    return this.sendNow({ wallet: wallet.connect(this.provider), nonce: null, busy: true }, tx, decode, onSigned);
  }

  private dispatch(): void {
    for (const payer of this.payers) {
      if (payer.busy) continue;
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
    try {
      const signed = await payer.wallet.signTransaction(await payer.wallet.populateTransaction({ ...tx, nonce: payer.nonce }));
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
    return this.receiptOf(payer, hash!);
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

  private async receiptOf(payer: Payer, hash: string): Promise<TransactionReceipt> {
    const receipt = await this.waitForReceipt(hash);
    if (!receipt) {
      payer.nonce = null;
      throw new AppError(504, "chain_timeout", `transaction ${hash} was not mined within ${this.txTimeoutMs} ms; it may still land`);
    }
    return receipt;
  }

  /**
   * Polls for the receipt itself. (ethers' waitForTransaction compares against a cached block number
   * and waits for its next block poll, ~4 s; under automine it can miss the only block and hang.)
   */
  private async waitForReceipt(hash: string): Promise<TransactionReceipt | null> {
    const deadline = Date.now() + this.txTimeoutMs;
    for (;;) {
      const receipt = await this.provider.getTransactionReceipt(hash).catch(() => null);
      if (receipt) return receipt;
      if (Date.now() >= deadline) return null;
      await new Promise((r) => setTimeout(r, Math.min(this.receiptPollMs, Math.max(0, deadline - Date.now()))));
    }
  }
}
