type Node<K, V> = { key: K; value: V; weight: number; older?: Node<K, V>; newer?: Node<K, V> };

/**
 * A map bounded by weight (by default one per entry) that drops its least recently used entries
 * first: a read moves an entry to the newest end, an insert past the bound evicts from the oldest
 * end (and tells `onEvict`, so an index kept beside the map can forget the key too). Every
 * operation is O(1): a Map finds the node, a doubly linked list keeps the recency order. (A bare
 * Map's insertion order would do until evictions pile deleted slots at its front, which each
 * "oldest" lookup then walks over.)
 */
export class Lru<K, V> {
  private readonly nodes = new Map<K, Node<K, V>>();
  private oldest?: Node<K, V>;
  private newest?: Node<K, V>;
  private used = 0;

  constructor(
    /** The most weight kept (entries, or bytes with a `weigh`). */
    readonly capacity: number,
    private readonly opts: { weigh?: (value: V) => number; onEvict?: (key: K, value: V) => void } = {},
  ) {}

  /** The value under `key`, now the most recently used; undefined when absent. */
  get(key: K): V | undefined {
    const node = this.nodes.get(key);
    if (!node) return undefined;
    this.unlink(node);
    this.link(node);
    return node.value;
  }

  /** The value under `key` without touching its recency. */
  peek(key: K): V | undefined {
    return this.nodes.get(key)?.value;
  }

  has(key: K): boolean {
    return this.nodes.has(key);
  }

  /**
   * Stores `value` as the most recently used, then evicts the least recently used entries until the
   * weight fits. A value heavier than the whole capacity is not kept (and evicts nothing).
   */
  set(key: K, value: V): void {
    const weight = this.opts.weigh?.(value) ?? 1;
    this.delete(key);
    if (weight > this.capacity) return;
    const node: Node<K, V> = { key, value, weight };
    this.nodes.set(key, node);
    this.link(node);
    this.used += weight;
    while (this.used > this.capacity && this.oldest) {
      const evicted = this.oldest;
      this.remove(evicted);
      this.opts.onEvict?.(evicted.key, evicted.value);
    }
  }

  /** Removes `key` (not an eviction: onEvict is not told). */
  delete(key: K): boolean {
    const node = this.nodes.get(key);
    if (!node) return false;
    this.remove(node);
    return true;
  }

  clear(): void {
    this.nodes.clear();
    this.oldest = this.newest = undefined;
    this.used = 0;
  }

  get size(): number {
    return this.nodes.size;
  }

  /** The weight held (the entry count without a `weigh`). */
  get weight(): number {
    return this.used;
  }

  private remove(node: Node<K, V>): void {
    this.nodes.delete(node.key);
    this.unlink(node);
    this.used -= node.weight;
  }

  /** Makes `node` the newest. */
  private link(node: Node<K, V>): void {
    node.older = this.newest;
    node.newer = undefined;
    if (this.newest) this.newest.newer = node;
    this.newest = node;
    this.oldest ??= node;
  }

  private unlink(node: Node<K, V>): void {
    if (node.older) node.older.newer = node.newer;
    else this.oldest = node.newer;
    if (node.newer) node.newer.older = node.older;
    else this.newest = node.older;
    node.older = node.newer = undefined;
  }
}
