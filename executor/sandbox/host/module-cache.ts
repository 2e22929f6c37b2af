/**
 * The relayer's cache of modules fetched from the import CDN, shared by every run: what the CDN
 * answered for a URL, kept by its content hash (SHA-384), bounded in bytes and entries (least
 * recently used dropped first).
 *
 * What it may hold is only ever what the configured CDN served for that URL: an action chooses
 * which URLs are fetched, never their bytes. An integrity pin selects (a cached entry that does not
 * match a pin is fetched again) but never adds anything the CDN did not serve; so one account's
 * unpinned import cannot hand another account's pinned import other bytes, and a pinned import
 * finds its bytes by hash whichever URL brought them.
 */

export type CachedModule = { url: string; hash: string; bytes: Buffer };

export class ModuleCache {
  /** URL → module, in least-recently-used order (oldest first). */
  private readonly byUrl = new Map<string, CachedModule>();
  /** sha384-<base64> → the URLs whose bytes have that hash. */
  private readonly byHash = new Map<string, Set<string>>();
  private bytes = 0;

  constructor(
    private readonly maxBytes: number,
    private readonly maxEntries: number,
  ) {}

  /** The module cached for `url` (now the most recently used), or undefined. */
  get(url: string): CachedModule | undefined {
    const hit = this.byUrl.get(url);
    if (hit) this.touch(hit);
    return hit;
  }

  /** A cached module whose bytes have the SHA-384 `hash` (sha384-<base64>), or undefined. */
  withHash(hash: string): CachedModule | undefined {
    const url = this.byHash.get(hash)?.values().next().value;
    return url === undefined ? undefined : this.get(url);
  }

  /** Keeps what the CDN answered for `url` (replacing what was kept for it), then drops the least recently used past the bounds. */
  put(module: CachedModule): void {
    if (module.bytes.length > this.maxBytes || this.maxEntries === 0) return;
    this.delete(module.url);
    this.byUrl.set(module.url, module);
    const urls = this.byHash.get(module.hash) ?? new Set<string>();
    urls.add(module.url);
    this.byHash.set(module.hash, urls);
    this.bytes += module.bytes.length;
    for (const oldest of this.byUrl.keys()) {
      if (this.bytes <= this.maxBytes && this.byUrl.size <= this.maxEntries) break;
      this.delete(oldest);
    }
  }

  stats(): { entries: number; bytes: number } {
    return { entries: this.byUrl.size, bytes: this.bytes };
  }

  private touch(module: CachedModule): void {
    this.byUrl.delete(module.url);
    this.byUrl.set(module.url, module);
  }

  private delete(url: string): void {
    const old = this.byUrl.get(url);
    if (!old) return;
    this.byUrl.delete(url);
    this.bytes -= old.bytes.length;
    const urls = this.byHash.get(old.hash);
    urls?.delete(url);
    if (urls?.size === 0) this.byHash.delete(old.hash);
  }
}
