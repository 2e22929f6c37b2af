/**
 * The host side of `import`: fetches a module of an action's import graph from the configured CDN,
 * once (a shared cache by content hash, ./module-cache.ts, and one request for concurrent askers),
 * checked: under the CDN's base, no redirect followed (as Chipotle), a 2xx answer of a JavaScript
 * content type, UTF-8, at most `maxModuleBytes`, within a fixed timeout, through the egress policy
 * of fetch (./egress.ts: the name resolved once, every address public). The operator's CDN may
 * sit at a private address only when its URL names that address itself (an IP literal: a mirror,
 * or a test's loopback server), and only that host and port are reachable so. SHA-384 pins select
 * what is cached (one hash per download, none per request); the sandbox process checks every pin.
 *
 * What one run may make the relayer read is its byte budget (`maxRunBytes`), reserved as the bytes
 * arrive: a module's declared length is charged to every run waiting for it before any byte of its
 * body is read, then the bytes as they are read, so a run past its budget stops its downloads at
 * once instead of after they finished. A download is shared by the runs that ask for its URL while
 * it is under way, and aborted only when none of them waits any more (each stops waiting when it
 * ends, when its deadline passes, when its budget is spent or when another of its imports failed).
 * What enters the shared cache is only a module some run received within its budget, at most a
 * quarter of the cache per run.
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
/** The share of the shared cache one run may fill (one run never displaces more than this of what others use). */
const RUN_CACHE_SHARE = 4;

const hostOf = (hostname: string) => hostname.replace(/^\[|\]$/g, "").toLowerCase();

/** The imports of one run: the bytes charged to it, and the waits it has under way. */
class RunImports {
  used = 0;
  cached = 0;
  failed?: Error;
  readonly waits = new Set<Wait>();

  constructor(
    readonly maxBytes: number,
    readonly cacheShare: number,
  ) {}

  /** `bytes` more charged to the run; past its budget the run's imports fail (all of them: the run ends with the first). */
  charge(bytes: number): void {
    this.used += bytes;
    if (this.used > this.maxBytes) this.fail(new RangeError(`import limit exceeded: the modules of one run are at most ${this.maxBytes} bytes in all (VESTA_IMPORT_MAX_RUN_BYTES)`));
  }

  /** The run's imports can no longer succeed: it stops waiting for every download (each is aborted when no other run waits). */
  fail(err: Error): void {
    this.failed ??= err;
    for (const wait of [...this.waits]) wait.end(err);
  }
}

/** One run waiting for one download; `charged`: what this download cost the run so far. */
type Wait = { run: RunImports; charged: number; end(err: Error | undefined, module?: CachedModule): void };

/** One request for a URL, shared by every run that waits for it; aborted when none waits any more. */
class Download {
  readonly abort = new AbortController();
  readonly waits = new Set<Wait>();
  /** Bytes each waiting run is charged: the declared length, then what was read when more. */
  bytes = 0;
  settled = false;

  /** The download holds `bytes` now: each waiting run is charged the difference (and may stop waiting). */
  progress(bytes: number): void {
    this.bytes = bytes;
    for (const wait of [...this.waits]) {
      const more = bytes - wait.charged;
      wait.charged = bytes;
      wait.run.charge(more);
    }
  }

  leave(wait: Wait): void {
    this.waits.delete(wait);
    if (this.waits.size === 0 && !this.settled) this.abort.abort();
  }
}

export class ModuleFetcher {
  readonly config: ImportConfig;
  private readonly cache: ModuleCache;
  private readonly inflight = new Map<string, Download>();
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
   * concurrent askers and kept. Its bytes are charged to `run` (a run of its own by default), cached
   * or not; the wait ends at `deadline` or when `signal` aborts. Rejects with the message the action sees.
   */
  async load(url: string, integrity: readonly string[], deadline: number, signal?: AbortSignal, run = this.newRun()): Promise<CachedModule> {
    let parsed: URL | undefined;
    try {
      parsed = new URL(url);
    } catch {
      parsed = undefined;
    }
    if (!parsed || parsed.href !== url || !onCdn(this.config.source, parsed)) throw new TypeError(`import: ${url.slice(0, 200)} is not a module URL on the import CDN`);
    if (run.failed) throw run.failed;
    // The SHA-384 pins (Chipotle's form) choose among what is cached: compared with the hash computed
    // once per download, never hashed again here. Every pin, of every algorithm, is checked by the
    // sandbox process against the bytes it receives.
    const sha384 = integrity.filter((pin) => pin.startsWith("sha384-"));
    const matches = (m: CachedModule) => sha384.every((pin) => pin === m.hash);
    const pinned = sha384[0];
    const byHash = pinned ? this.cache.withHash(pinned) : undefined;
    const cached = byHash && matches(byHash) ? { ...byHash, url } : this.cache.get(url);
    if (cached && matches(cached)) {
      run.charge(cached.bytes.length);
      if (run.failed) throw run.failed;
      return cached;
    }
    const module = await this.fetchOnce(url, deadline, signal, run);
    const pin = sha384.find((p) => p !== module.hash);
    if (pin) throw new Error(`import: integrity check failed for ${url}: the import pins ${pin}, the CDN served ${module.hash}`);
    return module;
  }

  /**
   * The `import` host call of one run: each module within the run's bytes (counted whether it was
   * cached or not: a run's limits do not depend on who ran before it). `signal` is the run's end
   * (HostCallContext.signal). Once one import of the run fails, the run's other downloads stop:
   * the run fails with the first.
   */
  forRun(deadline: number): (url: string, integrity: readonly string[], signal?: AbortSignal) => Promise<ModuleAnswer> {
    const run = this.newRun();
    return async (url, integrity, signal) => {
      try {
        const module = await this.load(url, integrity, deadline, signal, run);
        return { url: module.url, hash: module.hash, base64: module.bytes.toString("base64") };
      } catch (err) {
        run.fail(err as Error);
        throw err;
      }
    };
  }

  stats(): { entries: number; bytes: number } {
    return this.cache.stats();
  }

  private newRun(): RunImports {
    return new RunImports(this.config.maxRunBytes, Math.floor(this.config.cacheBytes / RUN_CACHE_SHARE));
  }

  /**
   * One request for `url` whoever asks while it is under way; this run waits until its deadline, its
   * end (`signal`) or its budget is spent, and is charged what the download holds as it arrives.
   */
  private fetchOnce(url: string, deadline: number, signal: AbortSignal | undefined, run: RunImports): Promise<CachedModule> {
    if (signal?.aborted) return Promise.reject(new Error(`import: ${url}: the run has ended`));
    const download = this.inflight.get(url) ?? this.start(url);
    return new Promise<CachedModule>((resolve, reject) => {
      let ended = false;
      const timer = setTimeout(() => wait.end(new Error(`import: ${url} did not arrive within the run's time`)), Math.max(0, deadline + AFTER_DEADLINE_MS - Date.now()));
      const runEnded = () => wait.end(new Error(`import: ${url}: the run has ended`));
      const wait: Wait = {
        run,
        charged: 0,
        end: (err, module) => {
          if (ended) return;
          ended = true;
          clearTimeout(timer);
          signal?.removeEventListener("abort", runEnded);
          run.waits.delete(wait);
          download.leave(wait);
          if (err) reject(err);
          else resolve(module!);
        },
      };
      signal?.addEventListener("abort", runEnded, { once: true });
      download.waits.add(wait);
      run.waits.add(wait);
      // Joining a download under way: what it holds already is charged now.
      if (download.bytes > 0) {
        wait.charged = download.bytes;
        run.charge(download.bytes);
      }
    });
  }

  /** Starts the download of `url`; when it ends, each run still waiting gets the module (or the error). */
  private start(url: string): Download {
    const download = new Download();
    this.inflight.set(url, download);
    const settle = () => {
      download.settled = true;
      this.inflight.delete(url);
    };
    this.download(url, download).then(
      (module) => {
        settle();
        download.progress(module.bytes.length); // the final size (a declared length may have been more)
        const waiting = [...download.waits];
        // Cached only when a run received it within its budget, and within that run's share of the cache.
        const keeper = waiting.find((w) => w.run.cached + module.bytes.length <= w.run.cacheShare);
        if (keeper) {
          keeper.run.cached += module.bytes.length;
          this.cache.put(module);
        }
        for (const wait of waiting) wait.end(undefined, module);
      },
      (err: Error) => {
        settle();
        for (const wait of [...download.waits]) wait.end(err);
      },
    );
    return download;
  }

  private async download(url: string, download: Download): Promise<CachedModule> {
    const { abort } = download;
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
      const tooLarge = () => new RangeError(`import: ${url} is larger than ${max} bytes (VESTA_IMPORT_MAX_MODULE_BYTES)`);
      const bytes = await readCapped(res, max, abort, tooLarge, (held) => download.progress(held));
      if (decodeUtf8(bytes) === undefined) throw new Error(`import: ${url} is not UTF-8 text`);
      return { url, hash: sha384Of(bytes), bytes };
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
