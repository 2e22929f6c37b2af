import { Transaction, Wallet, type JsonRpcProvider, type TransactionReceipt, type TransactionRequest } from "ethers";
import type { Logger } from "pino";
import { AppError } from "../errors";
import { CHAIN_RETRY_AFTER_SECONDS, chainOutage } from "../../protocol/chainErrors";
import { DEFAULT_WRITE_LIMITS, WriteShare, type WriteLimits, type WriteOwner, type WriteTicket } from "./writeShare";

type Payer = { wallet: Wallet; nonce: number | null; busy: boolean };
type Job = (payer: Payer) => Promise<void>;

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
 * A pool of payer wallets. Each payer sends one transaction at a time, each after the previous one
 * is mined, with a nonce kept locally and read back from the chain at start and after any send
 * error. Writes are admitted against their fair share (writeShare.ts: bounded per account, per
 * billing payer and in all) and wait for a free payer wallet in turns: billing payers take turns,
 * each one's writes in order.
 */
export class PayerPool {
  private readonly payers: Payer[];
  readonly share: WriteShare<Job>;
  /** Recent time from a write's turn to its receipt (ms, moving average), for Retry-After. */
  private writeMs = 2_000;

  constructor(
    keys: string[],
    private readonly provider: JsonRpcProvider,
    private readonly logger: Logger,
    private readonly txTimeoutMs: number,
    private readonly receiptPollMs = 100,
    limits?: WriteLimits,
  ) {
    this.payers = keys.map((k) => ({ wallet: new Wallet(k, provider), nonce: null, busy: false }));
    this.share = new WriteShare(limits ?? DEFAULT_WRITE_LIMITS);
  }

  addresses(): string[] {
    return this.payers.map((p) => p.wallet.address);
  }

  /**
   * A ticket for a write of `owner`, held until `release()`; 429 write_queue_full (with Retry-After:
   * about as long as the writes it holds take, spread over the payer wallets) past its share.
   */
  admit(owner: WriteOwner): WriteTicket {
    const verdict = this.share.admit(owner);
    if (typeof verdict !== "string") return verdict;
    const { limits } = this.share;
    const held = this.share.holding(owner)[verdict];
    const retryAfter = Math.min(60, Math.max(1, Math.ceil((held * this.writeMs) / this.payers.length / 1000)));
    const message = {
      account: `this account has ${limits.perAccount} relayed writes queued or in flight, its share (VESTA_WRITES_PER_ACCOUNT); nothing was sent, retry in ${retryAfter} s`,
      payer: `the payer of this account has ${limits.perPayer} relayed writes queued or in flight, its share (VESTA_WRITES_PER_PAYER); nothing was sent, retry in ${retryAfter} s`,
      total: `the service has ${limits.total} relayed writes queued or in flight (VESTA_WRITE_QUEUE_MAX); nothing was sent, retry in ${retryAfter} s`,
    }[verdict];
    throw new AppError(429, "write_queue_full", message, { bound: verdict }, { "retry-after": String(retryAfter) });
  }

  /**
   * Sends `tx` of the write holding `ticket`, when its payer's turn comes and a payer wallet is free,
   * and resolves with its receipt once mined. `decode` turns a send error that carries revert data
   * (some nodes, Hardhat's among them, mine a reverting transaction and report the revert at send
   * time) into the answer to give. `onSigned` hears the hash of each signed transaction before it is
   * broadcast (billing records it, to find its cost). A transaction that surely did not reach the
   * chain rejects with TxNotSent.
   */
  send(tx: TransactionRequest, ticket: WriteTicket, decode?: (err: unknown) => unknown, onSigned?: (hash: string) => void): Promise<TransactionReceipt> {
    return new Promise((resolve, reject) => {
      this.share.wait(ticket, (payer) => this.sendNow(payer, tx, decode, onSigned).then(resolve, reject));
      this.pump();
    });
  }

  /** Gives each free payer wallet the next write in turn. */
  private pump(): void {
    for (const payer of this.payers) {
      if (payer.busy) continue;
      const job = this.share.next();
      if (!job) return;
      payer.busy = true;
      const started = Date.now();
      void job(payer).finally(() => {
        payer.busy = false;
        this.writeMs = 0.8 * this.writeMs + 0.2 * (Date.now() - started);
        this.pump();
      });
    }
  }

  private async sendNow(payer: Payer, tx: TransactionRequest, decode?: (err: unknown) => unknown, onSigned?: (hash: string) => void, retried = false): Promise<TransactionReceipt> {
    if (payer.nonce === null) payer.nonce = await this.provider.getTransactionCount(payer.wallet.address, "pending");
    let hash: string | undefined;
    try {
      const signed = await payer.wallet.signTransaction(await payer.wallet.populateTransaction({ ...tx, nonce: payer.nonce }));
      hash = Transaction.from(signed).hash!;
      onSigned?.(hash);
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
