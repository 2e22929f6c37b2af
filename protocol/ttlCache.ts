import { Lru } from "./lru";

/**
 * A map bounded in size and time: each entry lives until its own expiry (ms since the epoch), and
 * past `maxEntries` the oldest inserted entry goes first (kept in an Lru that reads only peek, so
 * that evictions cost O(1) however many there were: a bare Map's front fills with deleted slots).
 * Reads drop what expired.
 */
export class TtlCache<V> {
  private readonly entries: Lru<string, { value: V; expiresAt: number }>;

  constructor(maxEntries: number) {
    this.entries = new Lru(maxEntries);
  }

  get(key: string, now = Date.now()): V | undefined {
    const e = this.entries.peek(key);
    if (!e) return undefined;
    if (e.expiresAt <= now) {
      this.entries.delete(key);
      return undefined;
    }
    return e.value;
  }

  set(key: string, value: V, expiresAt: number): void {
    this.entries.set(key, { value, expiresAt });
  }

  delete(key: string): void {
    this.entries.delete(key);
  }

  clear(): void {
    this.entries.clear();
  }

  get size(): number {
    return this.entries.size;
  }
}
