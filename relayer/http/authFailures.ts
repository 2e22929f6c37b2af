import ipaddr from "ipaddr.js";
import { AppError } from "../errors";
import { TtlCache } from "../../protocol/ttlCache";
import { Lru } from "../../protocol/lru";

/** Addresses put in one form lately (every request's client address is; parsing one takes a few microseconds). */
const normalForms = new Lru<string, string>(4096);

/** An address in one form (IPv4-mapped IPv6 as IPv4, IPv6 compressed), or the text itself when it is no address. */
export function normalAddress(a: string): string {
  let form = normalForms.get(a);
  if (form === undefined) {
    form = ipaddr.isValid(a) ? ipaddr.process(a).toString() : a;
    if (a.length <= 64) normalForms.set(a, form); // an address is at most 45 characters (IPv4-mapped IPv6) plus a zone
  }
  return form;
}

/** VESTA_AUTH_FAILURE_EXEMPT: comma-separated IP addresses. */
export function parseExempt(v: string): { value: string[]; problem?: string } {
  const items = v.split(",").map((s) => s.trim()).filter(Boolean);
  const bad = items.filter((s) => !ipaddr.isValid(s));
  if (bad.length) return { value: [], problem: `VESTA_AUTH_FAILURE_EXEMPT: not IP addresses: ${bad.join(", ")}` };
  return { value: items.map(normalAddress) };
}

type Window = { count: number; endsAt: number };

/**
 * A per-client budget of failed authentications: `limit` a minute per client address. What costs the
 * service is a chain read for a key it does not remember, so such a lookup is counted when it starts
 * (the limit holds for lookups racing each other) and taken back when the key proves good; a key
 * refused from memory costs nothing and is not counted. Past the budget the client gets 429 for a key
 * that would need a chain read, unless that key proved good lately (from any client; forgotten when
 * it fails): the service's cache drops a key on every event of its account, and a client that shares
 * its address with a guesser must keep working. Addresses in `exempt` (a service that calls for many
 * users, such as the triggers service) have no budget. At most `maxEntries` clients and as many good
 * keys are tracked (the oldest first forgotten). One in-memory store per relayer.
 */
export class AuthFailureLimit {
  private readonly windows: TtlCache<Window>;
  private readonly goodKeys: TtlCache<true>;

  constructor(
    private readonly limit: number,
    private readonly exempt: ReadonlySet<string> = new Set(),
    private readonly windowMs = 60_000,
    private readonly goodKeyMs = 3_600_000,
    maxEntries = 100_000,
  ) {
    this.windows = new TtlCache<Window>(maxEntries);
    this.goodKeys = new TtlCache<true>(maxEntries);
  }

  /**
   * Before a chain lookup of `keyHash` for `client`: counts it, or refuses it (429) once the budget is
   * spent. A key that proved good lately is neither counted nor refused. True when counted.
   */
  startLookup(client: string, keyHash: bigint, now = Date.now()): boolean {
    if (this.exempt.has(client) || this.goodKeys.get(keyHash.toString(), now)) return false;
    const w = this.windows.get(client, now);
    if (w && w.count >= this.limit) {
      const seconds = Math.max(1, Math.ceil((w.endsAt - now) / 1000));
      throw new AppError(429, "rate_limited", `too many failed authentications from this address (at most ${this.limit} a minute); try again in ${seconds} s`, undefined, {
        "Retry-After": String(seconds),
      });
    }
    if (w) w.count++;
    else this.windows.set(client, { count: 1, endsAt: now + this.windowMs }, now + this.windowMs);
    return true;
  }

  /** The key proved good: remembered as such, and a lookup counted for it is taken back. */
  succeeded(client: string, keyHash: bigint, counted: boolean, now = Date.now()): void {
    this.goodKeys.set(keyHash.toString(), true, now + this.goodKeyMs);
    const w = counted ? this.windows.get(client, now) : undefined;
    if (w && w.count > 0) w.count--;
  }

  /** The key was refused: it is no longer taken for good (its lookup, if counted, stays counted). */
  failed(keyHash: bigint): void {
    this.goodKeys.delete(keyHash.toString());
  }
}
