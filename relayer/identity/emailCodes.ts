import crypto from "node:crypto";
import { AppError } from "../errors";
import { paths, type KeyProvider } from "../../executor/keys/provider";
import { verifiedIdentity, type VerifiedIdentity } from "./identity";
import { mailboxOf } from "../../protocol/mailbox";

/** Sends one sign-in code; the development mailer prints it to the log. */
export type CodeMailer = (email: string, code: string) => void | Promise<void>;

export type EmailCodeOptions = { ttlMs: number; maxAttempts: number; perHour: number; maxPending: number };
export const EMAIL_CODE_DEFAULTS: Omit<EmailCodeOptions, "perHour"> = { ttlMs: 10 * 60_000, maxAttempts: 5, maxPending: 100_000 };

type Pending = { hash: Buffer; expiresAt: number; attempts: number };
const HOUR_MS = 3_600_000;

/** An address in one form: trimmed and lower-cased (the identity's subject). */
export const normalEmail = (email: string): string => email.trim().toLowerCase();

/**
 * One-time sign-in codes sent by e-mail: 6 digits, one pending per address (a new one replaces
 * it), valid `ttlMs`, taken once, void after `maxAttempts` wrong guesses, at most `perHour` sent to
 * one mailbox an hour (the per-client limit is the routes'). Only an HMAC of (address, code) under
 * a key of the key provider is kept, never the code; at most `maxPending` addresses at a time
 * (then 503 identity_busy, rather than forget one).
 */
export class EmailCodes {
  private readonly pending = new Map<string, Pending>();
  /** Send times per mailbox within the last hour. */
  private readonly sent = new Map<string, number[]>();
  private macKey: Promise<Uint8Array> | undefined;

  constructor(
    private readonly keys: KeyProvider,
    private readonly opts: EmailCodeOptions,
    public mailer: CodeMailer,
  ) {}

  private async hash(email: string, code: string): Promise<Buffer> {
    this.macKey ??= this.keys.deriveSecret(paths.identityMac("email-code"));
    return crypto.createHmac("sha256", await this.macKey).update(`${email}\n${code}`).digest();
  }

  /** Sends a fresh code to `email`; resolves with its expiry (ms). 429 past the mailbox's hourly budget. */
  async send(rawEmail: string, now = Date.now()): Promise<number> {
    const email = normalEmail(rawEmail);
    const box = mailboxOf(email);
    const recent = (this.sent.get(box) ?? []).filter((t) => t > now - HOUR_MS);
    if (recent.length >= this.opts.perHour) {
      const retry = Math.max(1, Math.ceil((recent[0] + HOUR_MS - now) / 1000));
      throw new AppError(429, "rate_limited", `too many codes sent to this address (at most ${this.opts.perHour} an hour); try again in ${retry} s`, undefined, { "retry-after": String(retry) });
    }
    if (!this.pending.has(email) && this.pending.size >= this.opts.maxPending) this.sweep(now);
    if ((!this.pending.has(email) && this.pending.size >= this.opts.maxPending) || (!this.sent.has(box) && this.sent.size >= this.opts.maxPending)) {
      throw new AppError(503, "identity_busy", "this node holds as many pending e-mail codes as it keeps; nothing was sent, try again shortly");
    }
    recent.push(now); // counted before any await: concurrent requests cannot pass the budget together
    this.sent.set(box, recent);
    const code = crypto.randomInt(0, 1_000_000).toString().padStart(6, "0");
    const expiresAt = now + this.opts.ttlMs;
    this.pending.set(email, { hash: await this.hash(email, code), expiresAt, attempts: 0 });
    await this.mailer(email, code);
    return expiresAt;
  }

  /**
   * The e-mail identity the code proves, taking the code. 401 when there is none pending for the
   * address (never sent, expired, used, or sent to another address) or it is wrong; the wrong
   * guess that reaches the attempt limit voids the code (429 too_many_attempts).
   */
  async verify(rawEmail: string, code: string, now = Date.now()): Promise<VerifiedIdentity> {
    const email = normalEmail(rawEmail);
    const given = await this.hash(email, code); // first: from here on nothing awaits, so two checks of one code cannot both take it
    const p = this.pending.get(email);
    if (!p || p.expiresAt <= now) {
      if (p) this.pending.delete(email);
      throw new AppError(401, "invalid_email_code", "no code is pending for this address (never sent, expired or used): ask for a new one");
    }
    if (!crypto.timingSafeEqual(given, p.hash)) {
      p.attempts++;
      if (p.attempts >= this.opts.maxAttempts) {
        this.pending.delete(email);
        throw new AppError(429, "too_many_attempts", `${p.attempts} wrong codes: this code is void, ask for a new one`);
      }
      throw new AppError(401, "invalid_email_code", `wrong code (${this.opts.maxAttempts - p.attempts} attempts left)`);
    }
    this.pending.delete(email);
    return verifiedIdentity("email", "email", email);
  }

  private sweep(now: number): void {
    for (const [k, p] of this.pending) if (p.expiresAt <= now) this.pending.delete(k);
    for (const [k, times] of this.sent) if (times[times.length - 1] <= now - HOUR_MS) this.sent.delete(k);
  }
}
