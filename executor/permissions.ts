import type { Logger } from "pino";
import type { IAccountConfig } from "../typechain-types";
import type { JsonRpcProvider } from "ethers";
import { TtlCache } from "../protocol/ttlCache";
import { Lru } from "../protocol/lru";

export type Who = { keyHash: bigint; accountHash: bigint; isAccountKey: boolean };
export type Resolved = { accountHash: bigint; isAccountKey: boolean; active: boolean };
/** Every cached entry names the account whose events drop it. */
type Decision = { accountHash: bigint; allowed: boolean; groupId: bigint };
type CachedKey = { accountHash: bigint; isAccountKey: boolean; expiration: bigint };
type CachedRead = { accountHash: bigint; value: unknown };
/** The three caches, by the prefix of their keys in the per-account index. */
type Kind = "d" | "k" | "r";

/** How long an event's naming of a key is kept, to tell whether it happened during a chain read of that key (longer than any read). */
const NAMED_MEMORY_MS = 600_000;

/**
 * The execution question of spec 1 — may key K run action C with PKP P? — answered by the
 * contract (`findExecutionGroup`), cached, and kept in sync from the contract's events: every
 * AccountConfig event names its account (topic 1), and any event of an account drops every
 * cached decision of that account. Writes relayed by this service drop them at once (see
 * `invalidate`); writes sent to the contract directly are seen at the next poll (`pollMs`).
 * The cache only ever holds what the chain answered; on any doubt (not synced yet) it asks the chain.
 *
 * Keys the chain does not know (or knows as revoked, expired, or without an account key) are
 * remembered too, for `unknownKeyTtlMs` at most and until an event names them (`seen`: a key becomes
 * usable only through an event that names it, `AccountCreated` or `UsageApiKeySet`), so that a
 * caller repeating a bad key costs no chain read; concurrent lookups of one key share one read.
 * Each of its three maps (decisions, keys, reads) keeps at most `maxEntries`, least recently used
 * dropped first, and the per-account index forgets what they drop: a caller asking about a million
 * distinct (key, CID, wallet) triples evicts its own cold entries, never stops the cache.
 */
export class PermissionCache {
  private readonly decisions: Lru<string, Decision>;
  private readonly keys: Lru<string, CachedKey>;
  private readonly reads: Lru<string, CachedRead>;
  /** Account → the index keys ("d:…", "k:…", "r:…") of its cached entries, to drop them on its events. */
  private readonly byAccount = new Map<bigint, Set<string>>();
  /** Keys the chain answered unknown or inactive, with that answer (by hash, as a decimal string). */
  private readonly unknown: TtlCache<Resolved>;
  /**
   * When (the `version`) an event last named a key, and when the cache was last cleared: a refusal
   * read from the chain is remembered only when neither happened while it was read.
   */
  private readonly named: TtlCache<number>;
  private clearedAt = 0;
  /** Chain reads of keys under way, shared by concurrent callers. */
  private readonly lookups = new Map<bigint, Promise<Resolved>>();
  /** Bumped on every invalidation, so that a chain read that raced with one is not cached. */
  private version = 0;
  private cursor = -1;
  /** The newest block timestamp seen (seconds): the contract judges expiry by block time, which may run ahead of this machine's clock. */
  private chainTime = 0;
  private timer?: NodeJS.Timeout;
  private stopped = false;
  /** When the chain's events were last followed (ms; 0: never), for metrics and readiness. */
  private syncedAt = 0;
  /** Lookups answered from memory (hit) or read from the chain (miss), by kind: plain counters (metrics read them at scrape time). */
  readonly cacheStats = { key: { hit: 0, miss: 0 }, decision: { hit: 0, miss: 0 }, read: { hit: 0, miss: 0 } };

  constructor(
    private readonly accountConfig: IAccountConfig,
    private readonly provider: JsonRpcProvider,
    private readonly logger: Logger,
    private readonly pollMs: number,
    /**
     * Entries kept at most, per map (decisions, keys, reads, and the refused keys with the events'
     * namings of keys); past it the least recently used goes (refused keys and namings: the oldest remembered).
     */
    maxEntries = 100_000,
    /** How long an unknown or inactive key is answered from memory, at most (0: never). */
    private readonly unknownKeyTtlMs = 10_000,
  ) {
    const lru = <V extends { accountHash: bigint }>(kind: Kind) => new Lru<string, V>(maxEntries, { onEvict: (k, v) => this.unindex(v.accountHash, `${kind}:${k}`) });
    this.decisions = lru("d");
    this.keys = lru("k");
    this.reads = lru("r");
    this.unknown = new TtlCache<Resolved>(maxEntries);
    this.named = new TtlCache<number>(maxEntries);
  }

  /** Starts following the chain from the current block; stops on `signal`. */
  async start(signal: AbortSignal): Promise<void> {
    this.cursor = await this.provider.getBlockNumber();
    await this.seeBlock(this.cursor);
    this.syncedAt = Date.now();
    const stop = () => {
      this.stopped = true;
      clearTimeout(this.timer);
    };
    // (an abort that came while the first reads were under way fires no event for a listener added now)
    if (signal.aborted) return stop();
    signal.addEventListener("abort", stop, { once: true });
    const tick = async () => {
      try {
        await this.sync();
      } catch (err) {
        // Unsynced: drop everything, so that every decision is read from the chain until the sync recovers.
        this.clear();
        this.logger.warn({ err: (err as Error).message }, "permission cache: sync failed, reading from the chain");
      }
      if (!this.stopped) this.timer = setTimeout(tick, this.pollMs);
    };
    this.timer = setTimeout(tick, this.pollMs);
  }

  /**
   * Reads the logs of the new blocks and drops the decisions of every account they name. One sync at
   * a time: a call made while another runs (the poller's, a caller's) starts after it, from its
   * cursor, and reads a head at least as new as the chain's when it was called. Two at once read the
   * same logs, and the slower one dropped again, after the faster one had synced, what lookups had
   * cached since (a run's key and decision read from the chain again), and could set the cursor back.
   */
  sync(): Promise<void> {
    const next = this.syncing.then(() => this.syncOnce());
    this.syncing = next.catch(() => undefined);
    return next;
  }

  private syncing: Promise<void> = Promise.resolve();

  private async syncOnce(): Promise<void> {
    const head = await this.provider.getBlockNumber();
    if (head < this.cursor) {
      // the chain went back (reorg or a reset local chain): nothing cached can be trusted
      this.clear();
      this.cursor = head;
      return;
    }
    if (head === this.cursor) return void (this.syncedAt = Date.now());
    const logs = await this.provider.getLogs({ address: await this.accountConfig.getAddress(), fromBlock: this.cursor + 1, toBlock: head });
    for (const log of logs) this.seen(log.topics);
    await this.seeBlock(head);
    this.cursor = head;
    this.syncedAt = Date.now();
  }

  /** Seconds since the chain's events were last followed (Infinity before the first time). */
  syncAgeSeconds(): number {
    return this.syncedAt === 0 ? Infinity : (Date.now() - this.syncedAt) / 1000;
  }

  private async seeBlock(n: number): Promise<void> {
    const block = await this.provider.getBlock(n);
    if (block) this.chainTime = Math.max(this.chainTime, block.timestamp);
  }

  /**
   * "Now" for expiry, in seconds: the later of this machine's clock and the newest block seen, so
   * that a cached key is never active when the contract (which judges by block time) says it expired.
   */
  now(): bigint {
    return BigInt(Math.max(Math.floor(Date.now() / 1000), this.chainTime));
  }

  private expired(expiration: bigint): boolean {
    return expiration !== 0n && this.now() >= expiration;
  }

  /**
   * An AccountConfig event: topic 1 names its account (whose cached state is dropped), and a key
   * named in topic 1 or 2 (a created account, a usage key set) is no longer remembered as unknown.
   */
  seen(topics: readonly string[]): void {
    if (!topics[1]) return;
    this.invalidate(BigInt(topics[1]));
    for (const t of topics.slice(1, 3)) {
      const k = BigInt(t).toString();
      this.unknown.delete(k);
      this.named.set(k, this.version, Date.now() + NAMED_MEMORY_MS);
    }
  }

  /** Drops every cached decision of `accountHash` (after a write this service relayed for it). */
  invalidate(accountHash: bigint): void {
    this.version++;
    const indexed = this.byAccount.get(accountHash);
    if (!indexed) return;
    for (const tagged of indexed) {
      const k = tagged.slice(2);
      if (tagged.startsWith("d:")) this.decisions.delete(k);
      else if (tagged.startsWith("k:")) this.keys.delete(k);
      else this.reads.delete(k);
    }
    this.byAccount.delete(accountHash);
  }

  clear(): void {
    this.version++;
    this.keys.clear();
    this.unknown.clear();
    this.clearedAt = this.version;
    this.reads.clear();
    this.decisions.clear();
    this.byAccount.clear();
  }

  /**
   * A presented key's hash as far as it is remembered (known keys with their expiry checked against
   * the clock, and keys remembered unknown), or undefined when only the chain can tell.
   */
  cached(keyHash: bigint): Resolved | undefined {
    if (!this.caching()) return undefined;
    const known = this.keys.get(keyHash.toString());
    if (known) return { accountHash: known.accountHash, isAccountKey: known.isAccountKey, active: !this.expired(known.expiration) };
    return this.unknown.get(keyHash.toString());
  }

  /**
   * Resolves a presented key's hash: from memory (see `cached`), else from the chain, one read per
   * key however many callers wait for it. `beforeRead` runs (and may refuse by throwing) only when
   * this call starts a chain read.
   */
  async resolve(keyHash: bigint, beforeRead?: () => void): Promise<Resolved> {
    const cached = this.cached(keyHash);
    if (cached) return (this.cacheStats.key.hit++, cached);
    this.cacheStats.key.miss++;
    const pending = this.lookups.get(keyHash);
    if (pending) return pending;
    beforeRead?.();
    const lookup = this.readKey(keyHash).finally(() => this.lookups.delete(keyHash));
    this.lookups.set(keyHash, lookup);
    return lookup;
  }

  private async readKey(keyHash: bigint): Promise<Resolved> {
    const before = this.version;
    const [accountHash, isAccountKey, active] = await this.accountConfig.resolveApiKey(keyHash);
    if (accountHash === 0n || !active) {
      const refused = { accountHash, isAccountKey, active };
      // (an inactive key keeps its account: billing resolves a wallet-owned account's hash, which has no account key)
      const k = keyHash.toString();
      const unchanged = this.clearedAt <= before && (this.named.get(k) ?? -1) <= before; // no event named it, no reset, while it was read
      if (this.caching() && unchanged && this.unknownKeyTtlMs > 0) this.unknown.set(k, refused, Date.now() + this.unknownKeyTtlMs);
      return refused;
    }
    const expiration = isAccountKey ? 0n : (await this.accountConfig.getUsageApiKey(keyHash)).expiration;
    if (this.caching() && before === this.version) this.remember("k", this.keys, keyHash.toString(), { accountHash, isAccountKey, expiration });
    return { accountHash, isAccountKey, active };
  }

  private caching(): boolean {
    return this.cursor >= 0 && !this.stopped;
  }

  /** Caches `value` under `key` in `map` and indexes it under its account. */
  private remember<V extends { accountHash: bigint }>(kind: Kind, map: Lru<string, V>, key: string, value: V): void {
    map.set(key, value); // may evict (and unindex) the least recently used entry first
    if (!map.has(key)) return;
    let set = this.byAccount.get(value.accountHash);
    if (!set) this.byAccount.set(value.accountHash, (set = new Set()));
    set.add(`${kind}:${key}`);
  }

  private unindex(accountHash: bigint, tagged: string): void {
    const set = this.byAccount.get(accountHash);
    if (!set) return;
    set.delete(tagged);
    if (set.size === 0) this.byAccount.delete(accountHash);
  }

  /** Whether `who` may run `cidHash` with `pkp` (ZeroAddress: the action alone, no PKP). */
  async allowed(who: Who, cidHash: string, pkp: string): Promise<boolean> {
    const k = `${who.keyHash}:${cidHash}:${pkp.toLowerCase()}`;
    // A cached decision holds only beside its key's cached expiry: a key that expired since (e.g.
    // during a run) is denied without asking the chain, and a decision whose key is not cached (its
    // read raced an invalidation, or it was evicted) is asked again, so an expired key is never let
    // through from memory. A decision not cached yet is the chain's, which judges expiry by block time.
    const key = this.caching() ? this.keys.peek(who.keyHash.toString()) : undefined;
    const cached = key ? this.decisions.get(k) : undefined;
    if (cached && key && this.expired(key.expiration)) return false;
    if (cached) return (this.cacheStats.decision.hit++, cached.allowed);
    this.cacheStats.decision.miss++;
    const before = this.version;
    const [allowed, groupId] = await this.accountConfig.findExecutionGroup(who.keyHash, cidHash, pkp);
    if (this.caching() && before === this.version) this.remember("d", this.decisions, k, { accountHash: who.accountHash, allowed, groupId });
    return allowed;
  }

  /**
   * A view of `accountHash`'s on-chain state (e.g. a list page), cached under `key` until an event
   * of that account is seen: the relayer's own writes drop it at once, direct contract writes at the
   * next poll. Pass only reads whose result depends on that account's state alone.
   */
  async read<T>(accountHash: bigint, key: string, fetch: () => Promise<T>): Promise<T> {
    const k = `${accountHash}/${key}`;
    const cached = this.caching() ? this.reads.get(k) : undefined;
    if (cached) return (this.cacheStats.read.hit++, cached.value as T);
    this.cacheStats.read.miss++;
    const before = this.version;
    const value = await fetch();
    if (this.caching() && before === this.version) this.remember("r", this.reads, k, { accountHash, value });
    return value;
  }

  /** How much is cached (for tests and metrics): entries per map, refused keys, and index entries over all accounts. */
  size(): { decisions: number; keys: number; reads: number; unknownKeys: number; indexed: number; accounts: number } {
    let indexed = 0;
    for (const set of this.byAccount.values()) indexed += set.size;
    return { decisions: this.decisions.size, keys: this.keys.size, reads: this.reads.size, unknownKeys: this.unknown.size, indexed, accounts: this.byAccount.size };
  }
}
