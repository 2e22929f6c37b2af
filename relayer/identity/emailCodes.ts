import crypto from "node:crypto";
import type { Logger } from "pino";
import { AppError } from "../errors";
import { paths, type KeyProvider } from "../../executor/keys/provider";
import { verifiedIdentity, type VerifiedIdentity } from "./identity";
import { mailboxOf } from "../../protocol/mailbox";
import type { IdentityStore } from "./store";

/** Sends one sign-in code (the development mailer prints it to the log; smtp sends it, see mailer.ts); `log`: the logger of the request that asked. */
export type CodeMailer = (email: string, code: string, log?: Logger) => void | Promise<void>;

export type EmailCodeOptions = { ttlMs: number; maxAttempts: number; perHour: number };
export const EMAIL_CODE_DEFAULTS: Omit<EmailCodeOptions, "perHour"> = { ttlMs: 10 * 60_000, maxAttempts: 5 };
const KIND = "email";
/** Where the pending code of (address, client) is kept: an address cannot hold "\n", so no two pairs share a key. */
const keyOf = (email: string, client: string): string => `${email}\n${client}`;

/** Codes one client may have sent to one mailbox an hour: half the mailbox's budget, rounded up, so no one client spends it all (unless it is 1). */
export const clientShare = (perHour: number): number => Math.ceil(perHour / 2);

/** An address in one form: trimmed and lower-cased (the identity's subject). */
export const normalEmail = (email: string): string => email.trim().toLowerCase();

/**
 * One-time sign-in codes sent by e-mail: 6 digits, valid `ttlMs`, taken once, void after
 * `maxAttempts` wrong guesses, at most `perHour` sent to one mailbox an hour, of which one client
 * may ask clientShare(perHour) (the per-client limit of requests is the routes'). A pending code
 * belongs to the client that asked for it (its address as the rate limits key it): one pending per
 * (address, client), a new one from that client replacing it, and checked only for that client,
 * so another client can neither replace the owner's code nor void it with wrong guesses. Pending
 * codes and the hourly budget live in the identity store (every replica sees them); only an HMAC
 * of (address, code) under a key of the key provider is kept, never the code. A right code is
 * taken by a conditional delete: of two sign-ins racing with it, one gets it.
 */
export class EmailCodes {
  private macKey: Promise<Uint8Array> | undefined;

  constructor(
    private readonly keys: KeyProvider,
    private readonly store: IdentityStore,
    private readonly opts: EmailCodeOptions,
    public mailer: CodeMailer,
  ) {}

  private async hash(email: string, code: string): Promise<string> {
    this.macKey ??= this.keys.deriveSecret(paths.identityMac("email-code"));
    return crypto.createHmac("sha256", await this.macKey).update(`${email}\n${code}`).digest("base64url");
  }

  /**
   * Sends a fresh code to `email` for `client` (the asking address: its code for `email` replaces
   * its last, and it holds at most a few pending codes, see IdentityStore.put); resolves with its
   * expiry (ms). 429 past the mailbox's hourly budget, or past the client's share of it.
   */
  async send(rawEmail: string, client: string, now = Date.now(), log?: Logger): Promise<number> {
    const email = normalEmail(rawEmail);
    const key = keyOf(email, client);
    await this.store.room(KIND, key, client, now); // before the mailbox's budget is spent: a refused client (or a full node) spends none of it
    const perClient = clientShare(this.opts.perHour);
    const refused = await this.store.spendSend(mailboxOf(email), client, { perHour: this.opts.perHour, perClient }, now); // counted before the code exists: concurrent requests cannot pass the budget together
    if (refused) {
      const which = refused.spent === "mailbox" ? `too many codes sent to this address (at most ${this.opts.perHour} an hour)` : `this client asked too many codes for this address (at most ${perClient} an hour, its share of the address's ${this.opts.perHour})`;
      throw new AppError(429, "rate_limited", `${which}; try again in ${refused.retry} s`, undefined, { "retry-after": String(refused.retry) });
    }
    const code = crypto.randomInt(0, 1_000_000).toString().padStart(6, "0");
    const expiresAt = now + this.opts.ttlMs;
    const hash = await this.hash(email, code);
    await this.store.put(KIND, key, hash, expiresAt, client, now);
    try {
      await this.mailer(email, code, log);
    } catch {
      await this.store.take(KIND, key, now, hash); // a code nobody received is void
      throw new AppError(503, "mail_unavailable", "the sign-in code could not be sent (the mail server did not take it); try again shortly");
    }
    return expiresAt;
  }

  /**
   * The e-mail identity the code proves, taking the code; `client` as for send(): only the code it
   * asked for is checked. 401 when it has none pending for the address (never sent, expired, used,
   * sent to another address, or asked for by another client) or the code is wrong; the wrong guess
   * that reaches the attempt limit voids that client's code (429 too_many_attempts).
   */
  async verify(rawEmail: string, code: string, client: string, now = Date.now()): Promise<VerifiedIdentity> {
    const email = normalEmail(rawEmail);
    const key = keyOf(email, client);
    const given = await this.hash(email, code);
    const none = () => new AppError(401, "invalid_email_code", "no code is pending for this address from this client (never sent, expired or used; a code signs in only from the network address that asked for it): ask for a new one");
    const p = await this.store.peek(KIND, key, now);
    if (!p) throw none();
    const max = this.opts.maxAttempts;
    // Every guess, right or wrong, spends one of the code's attempts before it is judged: of a burst
    // of guesses sent at once (to one replica or several), at most `max` are judged at all.
    const attempts = await this.store.spendGuess(KIND, key, p.body, max, now);
    if (attempts === undefined) throw none();
    if (crypto.timingSafeEqual(Buffer.from(given), Buffer.from(p.body.padEnd(given.length).slice(0, given.length)))) {
      if ((await this.store.take(KIND, key, now, given)) === undefined) throw none(); // another sign-in took it first, or the last wrong guess voided it
      return verifiedIdentity("email", "email", email);
    }
    if (attempts < max) throw new AppError(401, "invalid_email_code", `wrong code (${max - attempts} attempts left)`);
    // The last guess was wrong: the code is void, unless a right guess racing with it took it first (then this one found none).
    if ((await this.store.take(KIND, key, now, p.body)) === undefined) throw none();
    throw new AppError(429, "too_many_attempts", `${attempts} wrong codes: this code is void, ask for a new one`);
  }
}
