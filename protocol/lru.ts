/**
 * A map bounded by weight (by default one per entry) that drops its least recently used entries
 * first: a read moves an entry to the back, an insert past the bound evicts from the front (and
 * tells `onEvict`, so an index kept beside the map can forget the key too). Every operation is
 * O(1): a JavaScript Map keeps insertion order, which is the recency order here.
 */
export class Lru<K, V> {
  private readonly entries = new Map<K, { value: V; weight: number }>();
  private used = 0;

  constructor(
    /** The most weight kept (entries, or bytes with a `weigh`). */
    readonly capacity: number,
    private readonly opts: { weigh?: (value: V) => number; onEvict?: (key: K, value: V) => void } = {},
  ) {}

  /** The value under `key`, now the most recently used; undefined when absent. */
  get(key: K): V | undefined {
    const e = this.entries.get(key);
    if (!e) return undefined;
    this.entries.delete(key);
    this.entries.set(key, e);
    return e.value;
  }

  /** The value under `key` without touching its recency. */
  peek(key: K): V | undefined {
    return this.entries.get(key)?.value;
  }

  has(key: K): boolean {
    return this.entries.has(key);
  }

  /**
   * Stores `value` as the most recently used, then evicts the least recently used entries until the
   * weight fits. A value heavier than the whole capacity is not kept (and evicts nothing).
   */
  set(key: K, value: V): void {
    const weight = this.opts.weigh?.(value) ?? 1;
    this.delete(key);
    if (weight > this.capacity) return;
    this.entries.set(key, { value, weight });
    this.used += weight;
    while (this.used > this.capacity) {
      const [oldest, e] = this.entries.entries().next().value!;
      this.entries.delete(oldest);
      this.used -= e.weight;
      this.opts.onEvict?.(oldest, e.value);
    }
  }

  /** Removes `key` (not an eviction: onEvict is not told). */
  delete(key: K): boolean {
    const e = this.entries.get(key);
    if (!e) return false;
    this.entries.delete(key);
    this.used -= e.weight;
    return true;
  }

  clear(): void {
    this.entries.clear();
    this.used = 0;
  }

  get size(): number {
    return this.entries.size;
  }

  /** The weight held (the entry count without a `weigh`). */
  get weight(): number {
    return this.used;
  }
}
