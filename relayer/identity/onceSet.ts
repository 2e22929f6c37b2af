import { AppError } from "../errors";

/**
 * Strings that may be taken once each until they expire (used OpenID nonces), at most `max` at a
 * time. Full, it drops what expired, and then refuses (503 identity_busy) rather than forget a
 * taken entry: forgetting one would let it be taken twice.
 */
export class OnceSet {
  private readonly taken = new Map<string, number>();

  constructor(private readonly max: number) {}

  /** True when `key` was free (now taken until `expiresAt`, ms); false when taken already. */
  take(key: string, expiresAt: number, now = Date.now()): boolean {
    const until = this.taken.get(key);
    if (until !== undefined && until > now) return false;
    if (this.taken.size >= this.max) this.sweep(now);
    if (this.taken.size >= this.max) throw new AppError(503, "identity_busy", "this node holds as many recent sign-ins as it keeps; nothing was done, try again in a minute");
    this.taken.set(key, expiresAt);
    return true;
  }

  private sweep(now: number): void {
    for (const [k, until] of this.taken) if (until <= now) this.taken.delete(k);
  }

  get size(): number {
    return this.taken.size;
  }
}
