import { Transaction, Wallet, type JsonRpcProvider, type TransactionReceipt, type TransactionRequest } from "ethers";
import type { Logger } from "pino";
import { AppError } from "../errors";

type Payer = { wallet: Wallet; nonce: number | null; pending: number; tail: Promise<unknown> };

/**
 * A pool of payer wallets. Each payer has its own queue: its transactions go out one at a time,
 * each after the previous one is mined, with a nonce kept locally and read back from the chain
 * at start and after any send error. Writes spread over the payers with the fewest pending.
 */
export class PayerPool {
  private readonly payers: Payer[];
  private next = 0;

  constructor(
    keys: string[],
    private readonly provider: JsonRpcProvider,
    private readonly logger: Logger,
    private readonly txTimeoutMs: number,
    private readonly receiptPollMs = 100,
  ) {
    this.payers = keys.map((k) => ({ wallet: new Wallet(k, provider), nonce: null, pending: 0, tail: Promise.resolve() }));
  }

  addresses(): string[] {
    return this.payers.map((p) => p.wallet.address);
  }

  /**
   * Sends `tx` from the least busy payer and resolves with its receipt once mined. `decode` turns a
   * send error that carries revert data (some nodes, Hardhat's among them, mine a reverting
   * transaction and report the revert at send time) into the answer to give. `onSigned` hears the
   * hash of each signed transaction before it is broadcast (billing records it, to find its cost).
   */
  async send(tx: TransactionRequest, decode?: (err: unknown) => unknown, onSigned?: (hash: string) => void): Promise<TransactionReceipt> {
    const payer = this.pick();
    payer.pending++;
    const run = payer.tail.then(() => this.sendNow(payer, tx, decode, onSigned));
    payer.tail = run.catch(() => undefined);
    try {
      return await run;
    } finally {
      payer.pending--;
    }
  }

  private pick(): Payer {
    let best = this.payers[this.next % this.payers.length];
    for (let i = 0; i < this.payers.length; i++) {
      const p = this.payers[(this.next + i) % this.payers.length];
      if (p.pending < best.pending) best = p;
    }
    this.next++;
    return best;
  }

  private async sendNow(payer: Payer, tx: TransactionRequest, decode?: (err: unknown) => unknown, onSigned?: (hash: string) => void, retried = false): Promise<TransactionReceipt> {
    if (payer.nonce === null) payer.nonce = await this.provider.getTransactionCount(payer.wallet.address, "pending");
    let hash: string;
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
      this.logger.error({ err, payer: payer.wallet.address }, "sending a transaction failed");
      throw new AppError(503, "chain_unavailable", "the transaction could not be sent to the chain; nothing changed, try again");
    }
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


