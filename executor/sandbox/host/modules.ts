/**
 * The host side of `import`: fetches a module of an action's import graph from the configured CDN,
 * once (a shared cache by content hash, ./module-cache.ts, and one request for concurrent askers),
 * checked: under the CDN's base, no redirect followed (as Chipotle), a 2xx answer of a JavaScript
 * content type, UTF-8, at most `maxModuleBytes`, within a fixed timeout, through the egress policy
 * of fetch (./egress.ts: the name resolved once, every address public). The operator's CDN may
 * sit at a private address only when its URL names that address itself (an IP literal: a mirror,
 * or a test's loopback server), and only that host and port are reachable so. SHA-384 pins select
 * what is cached (one hash per download, none per request); the sandbox process checks every pin.
 */
import { isIP } from "node:net";
import { Agent, fetch } from "undici";
import { EgressRefused, guardedConnector, type Connector, type EgressOptions } from "./egress";
import { readCapped } from "./fetch";
import { ModuleCache, type CachedModule } from "./module-cache";
import { decodeUtf8 } from "../../../protocol/text";
import { checkedBase, DEFAULT_IMPORT_SOURCE, onCdn, sha384Of, type ImportSource } from "../imports";
import type { ModuleAnswer } from "../types";

export type ImportConfig = {
  source: ImportSource;
  /** Bytes of one module. */
  maxModuleBytes: number;
  /** Bytes of all the modules one run imports. */
  maxRunBytes: number;
  /** The shared cache: bytes and modules kept. */
  cacheBytes: number;
  cacheEntries: number;
};

export const DEFAULT_IMPORT_CONFIG: ImportConfig = {
  source: DEFAULT_IMPORT_SOURCE,
  maxModuleBytes: 4 * 1024 * 1024,
  maxRunBytes: 16 * 1024 * 1024,
  cacheBytes: 64 * 1024 * 1024,
  cacheEntries: 1000,
};

/** One module fetch (Chipotle's 30 s); a run waits at most what is left of it. */
const FETCH_TIMEOUT_MS = 30_000;
/** A run stops waiting this long after its deadline (by then the sandbox ended it with its time limit). */
const AFTER_DEADLINE_MS = 1000;
/** What browsers accept as a module script (strict MIME type checking), and what CDNs answer. */
const JS_TYPES = new Set(["text/javascript", "application/javascript", "application/x-javascript", "text/ecmascript", "application/ecmascript", "text/jsx"]);

const hostOf = (hostname: string) => hostname.replace(/^\[|\]$/g, "").toLowerCase();

export class ModuleFetcher {
  readonly config: ImportConfig;
  private readonly cache: ModuleCache;
  private readonly inflight = new Map<string, Promise<CachedModule>>();
  private readonly connector: Connector;

  constructor(config: Partial<ImportConfig> = {}, egress: EgressOptions = {}) {
    this.config = { ...DEFAULT_IMPORT_CONFIG, ...config };
    const base = new URL(checkedBase(this.config.source.base));
    this.cache = new ModuleCache(this.config.cacheBytes, this.config.cacheEntries);
    // Only the CDN's own host and port are ever connected to (URLs are checked, redirects refused).
    const literal = isIP(hostOf(base.hostname)) !== 0;
    const port = base.port || (base.protocol === "https:" ? "443" : "80");
    const guarded = guardedConnector({ ...egress, allowPrivateNetworks: egress.allowPrivateNetworks || literal });
    this.connector = (target, callback) => {
      if (hostOf(target.hostname) !== hostOf(base.hostname) || String(target.port || port) !== port) {
        return callback(new EgressRefused(`import: ${target.hostname} is not the import CDN`), null);
      }
      guarded(target, callback);
    };
  }

  /**
   * The module at `url` whose bytes match every pin of `integrity`; fetched at most once for all
   * concurrent askers and kept. Rejects with the message the action sees.
   */
  async load(url: string, integrity: readonly string[], deadline: number): Promise<CachedModule> {
    let parsed: URL | undefined;
    try {
      parsed = new URL(url);
    } catch {
      parsed = undefined;
    }
    if (!parsed || parsed.href !== url || !onCdn(this.config.source, parsed)) throw new TypeError(`import: ${url.slice(0, 200)} is not a module URL on the import CDN`);
    // The SHA-384 pins (Chipotle's form) choose among what is cached: compared with the hash computed
    // once per download, never hashed again here. Every pin, of every algorithm, is checked by the
    // sandbox process against the bytes it receives.
    const sha384 = integrity.filter((pin) => pin.startsWith("sha384-"));
    const matches = (m: CachedModule) => sha384.every((pin) => pin === m.hash);
    const pinned = sha384[0];
    const byHash = pinned ? this.cache.withHash(pinned) : undefined;
    if (byHash && matches(byHash)) return { ...byHash, url };
    const cached = this.cache.get(url);
    if (cached && matches(cached)) return cached;
    const module = await this.fetchOnce(url, deadline);
    const pin = sha384.find((p) => p !== module.hash);
    if (pin) throw new Error(`import: integrity check failed for ${url}: the import pins ${pin}, the CDN served ${module.hash}`);
    return module;
  }

  /**
   * The `import` host call of one run: each module within the run's bytes (counted whether it was
   * cached or not: a run's limits do not depend on who ran before it).
   */
  forRun(deadline: number): (url: string, integrity: readonly string[]) => Promise<ModuleAnswer> {
    let bytes = 0;
    return async (url, integrity) => {
      const module = await this.load(url, integrity, deadline);
      bytes += module.bytes.length;
      const max = this.config.maxRunBytes;
      if (bytes > max) throw new RangeError(`import limit exceeded: the modules of one run are at most ${max} bytes in all (VESTA_IMPORT_MAX_RUN_BYTES)`);
      return { url: module.url, hash: module.hash, base64: module.bytes.toString("base64") };
    };
  }

  stats(): { entries: number; bytes: number } {
    return this.cache.stats();
  }

  /** One request for `url` whoever asks while it is under way; each asker waits until its own deadline. */
  private fetchOnce(url: string, deadline: number): Promise<CachedModule> {
    let shared = this.inflight.get(url);
    if (!shared) {
      shared = this.download(url).finally(() => this.inflight.delete(url));
      this.inflight.set(url, shared);
    }
    const left = Math.max(0, deadline + AFTER_DEADLINE_MS - Date.now());
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`import: ${url} did not arrive within the run's time`)), left)));
    return Promise.race([shared, timeout]).finally(() => clearTimeout(timer));
  }

  private async download(url: string): Promise<CachedModule> {
    const abort = new AbortController();
    const timer = setTimeout(() => abort.abort(), FETCH_TIMEOUT_MS);
    const dispatcher = new Agent({ connect: this.connector });
    const max = this.config.maxModuleBytes;
    try {
      const res = await fetch(url, { redirect: "manual", signal: abort.signal, dispatcher, headers: { accept: "text/javascript, application/javascript" } });
      if (res.status >= 300 && res.status < 400) {
        await res.body?.cancel();
        throw new Error(`import: ${url} answered a redirect (HTTP ${res.status}); imports follow no redirect`);
      }
      if (res.status < 200 || res.status > 299) {
        await res.body?.cancel();
        throw new Error(`import: ${url} answered HTTP ${res.status}`);
      }
      const type = (res.headers.get("content-type") ?? "").split(";")[0].trim().toLowerCase();
      if (!JS_TYPES.has(type)) {
        await res.body?.cancel();
        throw new Error(`import: ${url} is not JavaScript (content-type ${JSON.stringify(type.slice(0, 100))})`);
      }
      const bytes = await readCapped(res, max, abort, () => new RangeError(`import: ${url} is larger than ${max} bytes (VESTA_IMPORT_MAX_MODULE_BYTES)`));
      if (decodeUtf8(bytes) === undefined) throw new Error(`import: ${url} is not UTF-8 text`);
      const module = { url, hash: sha384Of(bytes), bytes };
      this.cache.put(module);
      return module;
    } catch (err) {
      const e = err as Error & { cause?: unknown };
      if (e.cause instanceof EgressRefused) throw new Error(e.cause.message.replace(/^fetch:/, "import:"));
      if (abort.signal.aborted && !(err instanceof RangeError)) throw new Error(`import: ${url} timed out after ${FETCH_TIMEOUT_MS} ms`);
      if (e.message?.startsWith("import:")) throw e;
      throw new Error(`import: ${url}: ${e.message}`);
    } finally {
      clearTimeout(timer);
      dispatcher.destroy().catch(() => {});
    }
  }
}
