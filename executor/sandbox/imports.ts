/**
 * Both sides: how an action's `import` names a module on the CDN (Chipotle's rules), and the
 * integrity pins an import may state. The sandbox process resolves specifiers with these rules to
 * walk the import graph before the action runs; the relayer checks every URL it is asked to fetch
 * against the same base before it connects.
 *
 * - `name@1.2.3` or `@scope/name@1.2.3` → `<base>name@1.2.3<entry>` (jsDelivr: `…/npm/zod@3.22.4/+esm`);
 *   `name@1.2.3/path/file.js` → `<base>name@1.2.3/path/file.js`. The version is exact (no ranges,
 *   no tags: a URL must name one content for ever, or the cache could serve another), and the URL,
 *   once normalised (`..`, `%2e%2e`), must still name that package and version.
 * - a full URL under the base (`https://cdn.jsdelivr.net/npm/zod@3.22.4/+esm`);
 * - inside a module fetched from the CDN, a relative (`./x.js`, `../x.js`) or root-relative
 *   (`/npm/@noble/hashes@1.3.2/+esm`, esm.sh's `/v135/...`) path, joined to that module's URL, that
 *   stays under the base; the action itself has no URL, so it may not import relative paths;
 * Whatever the form, the module URL it comes to obeys the same rules (`moduleUrlProblem`, which the
 *   relayer applies again to every URL it is asked to fetch): under the base, no credentials, no
 *   query string and no fragment (each would make another URL, fetched and cached again, of the
 *   same module), and its path after the base starts with a package at an exact version
 *   (`name@1.2.3/...`, `@scope/name@1.2.3/...`; under a base at the host's root, after esm.sh's
 *   build prefix `v135/` or `stable/`): `<base>zod@latest/+esm` is refused as `zod@latest` is;
 * - `data:text/javascript,...` (or `;base64,`): a module carried in the specifier itself (jsDelivr
 *   inlines small dependencies so); nothing is fetched.
 * Any of them may end with an integrity pin, `#sha384-<base64>` (also sha256, sha512: the forms of
 * Subresource Integrity), checked against the module's bytes before it runs.
 */
import { createHash } from "node:crypto";

/** Where imports come from: the CDN's base URL, and what follows a bare `name@version`. */
export type ImportSource = { base: string; entry: string };

/** Chipotle's CDN: jsDelivr's npm backend, ES module entry points. */
export const DEFAULT_IMPORT_SOURCE: ImportSource = { base: "https://cdn.jsdelivr.net/npm/", entry: "/+esm" };

/** The action's own module name (what QuickJS names it; relative imports from it have no base). */
export const ACTION_MODULE = "action.js";
/** Characters of one import specifier (a data: URL included). */
export const MAX_SPECIFIER_CHARS = 64 * 1024;
/** Characters of a module URL on the CDN. */
export const MAX_MODULE_URL_CHARS = 2048;
/** Distinct modules one run may import (fetched and data: alike), as Chipotle. */
export const MAX_MODULES_PER_RUN = 100;
/** Longest chain of imports from the action (the action's own imports are at depth 1). */
export const MAX_IMPORT_DEPTH = 32;

/** A specifier resolved: a module URL on the CDN (fetched), or a data: URL (its own source). */
export type ResolvedImport = { kind: "cdn" | "data"; url: string; pin?: string };

/** A specifier that cannot be imported; the message says why, in the action's terms. */
export class ImportRefused extends Error {}

const PIN = /^(sha256|sha384|sha512)-([A-Za-z0-9+/]+={0,2})$/;
const DIGEST_B64_CHARS: Record<string, number> = { sha256: 44, sha384: 64, sha512: 88 };
const BARE = /^((?:@[A-Za-z0-9][A-Za-z0-9._~-]*\/)?[A-Za-z0-9][A-Za-z0-9._~-]*)@(\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?)(\/[A-Za-z0-9._~!$&'()*+,;=:@/-]+)?$/;
const DATA_JS = /^data:(?:text|application)\/javascript(;charset=utf-8)?(;base64)?,/i;

/** Whether `pin` is a well-formed integrity pin (`sha384-` + the base64 of a SHA-384 digest, ...). */
export function isPin(pin: string): boolean {
  const m = PIN.exec(pin);
  return m !== null && m[2].length === DIGEST_B64_CHARS[m[1]];
}

/** Whether `bytes` are what a pin names; each algorithm's digest of `bytes` is computed once, however many pins are checked. */
export function pinChecker(bytes: Uint8Array): (pin: string) => boolean {
  const digests = new Map<string, string>();
  return (pin) => {
    const m = PIN.exec(pin);
    if (!m) return false;
    let digest = digests.get(m[1]);
    if (digest === undefined) digests.set(m[1], (digest = createHash(m[1]).update(bytes).digest("base64")));
    return digest === m[2];
  };
}

/** The SHA-384 integrity string of `bytes`, as Chipotle's showImportDetails() reports it. */
export const sha384Of = (bytes: Uint8Array) => `sha384-${createHash("sha384").update(bytes).digest("base64")}`;

/** The base URL as it compares: parsed, http(s), no credentials, query or fragment, ending with "/". */
export function checkedBase(base: string): string {
  let url: URL;
  try {
    url = new URL(base);
  } catch {
    throw new TypeError(`the import CDN ${JSON.stringify(base.slice(0, 200))} is not a URL`);
  }
  if ((url.protocol !== "https:" && url.protocol !== "http:") || url.username || url.password || url.search || url.hash || !url.pathname.endsWith("/")) {
    throw new TypeError(`the import CDN must be an http(s) URL ending with "/", without credentials, query or fragment (got ${JSON.stringify(base.slice(0, 200))})`);
  }
  return url.href;
}

/** Whether `url` (absolute, parsed) lies under the CDN's base: http(s), no credentials, bounded. */
function underBase(base: string, url: URL): boolean {
  return (url.protocol === "https:" || url.protocol === "http:") && !url.username && !url.password && url.href.length <= MAX_MODULE_URL_CHARS && url.href.startsWith(base);
}

const PACKAGE_NAME = /^[A-Za-z0-9][A-Za-z0-9._~-]*$/;
const EXACT_VERSION = /^\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$/;
/** esm.sh's build prefixes (`/v135/zod@3.22.4/es2022/zod.mjs`), which come before the package under a base at the host's root. */
const BUILD_PREFIX = /^(?:v\d+|stable)$/;

/**
 * Why the path of a module URL after the base (`rest`) names no package at an exact version, or
 * undefined. The path is read as the CDN reads it, percent-decoded (`zod%40latest` is `zod@latest`).
 */
function packageProblem(rest: string, rootBase: boolean): string | undefined {
  // The exact version is read from the path as the CDN will read it: an encoded / or \ (which a CDN
  // may decode, then resolve "..") or a dot segment would make the checked name another one
  // (review finding: `zod@3.22.4%2F..%2Fzod@latest/+esm` passed as zod@3.22.4).
  if (/%(2f|5c)/i.test(rest)) return "its path has an encoded / or \\ (%2F, %5C): a CDN may decode it into another path";
  let segments: string[];
  try {
    segments = decodeURIComponent(rest).split("/");
  } catch {
    return "its path is not valid percent-encoding";
  }
  if (segments.some((segment) => segment === "." || segment === "..")) return "its path has a dot segment";
  if (rootBase && segments.length > 1 && BUILD_PREFIX.test(segments[0])) segments = segments.slice(1);
  const scoped = segments[0].startsWith("@");
  if (scoped && !PACKAGE_NAME.test(segments[0].slice(1))) return `${JSON.stringify(segments[0].slice(0, 100))} is not a package scope`;
  const named = scoped ? segments[1] ?? "" : segments[0];
  const at = named.indexOf("@");
  const name = at < 0 ? named : named.slice(0, at);
  const version = at < 0 ? undefined : named.slice(at + 1);
  if (!PACKAGE_NAME.test(name)) return "its path does not start with a package (name@1.2.3)";
  const pkg = (scoped ? `${segments[0]}/${name}` : name).slice(0, 200);
  if (version === undefined) return `it names ${pkg} without a version`;
  if (!EXACT_VERSION.test(version)) return `${pkg}@${version.slice(0, 100)} is not an exact version (a range or a tag may name other content tomorrow)`;
  return undefined;
}

/**
 * Why `url` (absolute, parsed) is not a module URL on the CDN, or undefined: under its base,
 * http(s), no credentials, bounded, no query string or fragment, and a package at an exact version
 * first in its path (see the rules above). The sandbox process checks each URL it resolves; the
 * relayer checks again every URL a sandbox asks it to fetch.
 */
export function moduleUrlProblem(source: ImportSource, url: URL): string | undefined {
  const base = checkedBase(source.base);
  if (!underBase(base, url)) return `only modules on the import CDN (${base}) can be imported`;
  if (url.search || url.hash || url.href.includes("?") || url.href.includes("#")) {
    return "a module URL has no query string or fragment (each would be another URL of the same module, fetched and cached again)";
  }
  const problem = packageProblem(url.href.slice(base.length), new URL(base).pathname === "/");
  return problem === undefined ? undefined : `a module URL names a package with an exact version (${base}name@1.2.3/...): ${problem}`;
}

/** Whether `url` (absolute, parsed) is a module URL on the CDN (moduleUrlProblem finds nothing wrong). */
export function onCdn(source: ImportSource, url: URL): boolean {
  return moduleUrlProblem(source, url) === undefined;
}

function parseUrl(text: string, base?: string): URL | undefined {
  try {
    return new URL(text, base);
  } catch {
    return undefined;
  }
}

const quote = (s: string) => JSON.stringify(s.length > 200 ? `${s.slice(0, 200)}…` : s);

/**
 * Resolves `specifier`, imported by the module named `referrer` (ACTION_MODULE or a CDN URL), to
 * the module it names; throws ImportRefused with the reason otherwise.
 */
export function resolveImport(source: ImportSource, specifier: string, referrer: string): ResolvedImport {
  if (specifier.length > MAX_SPECIFIER_CHARS) throw new ImportRefused(`import ${quote(specifier)}: a specifier is at most ${MAX_SPECIFIER_CHARS} characters`);
  if (DATA_JS.test(specifier)) return { kind: "data", url: specifier };
  const hash = specifier.indexOf("#");
  const spec = hash < 0 ? specifier : specifier.slice(0, hash);
  const pin = hash < 0 ? undefined : specifier.slice(hash + 1);
  if (pin !== undefined && !isPin(pin)) {
    throw new ImportRefused(`import ${quote(specifier)}: what follows "#" must be an integrity pin, sha384-<base64 of the SHA-384 digest> (or sha256-, sha512-)`);
  }
  const base = checkedBase(source.base);
  let url: URL | undefined;
  if (spec.startsWith("./") || spec.startsWith("../") || spec.startsWith("/")) {
    if (referrer === ACTION_MODULE) throw new ImportRefused(`import ${quote(specifier)}: an action has no URL to resolve a relative path against; import a package by name and exact version (zod@3.22.4)`);
    url = parseUrl(spec, referrer);
  } else if (/^[A-Za-z][A-Za-z0-9+.-]*:/.test(spec)) {
    url = parseUrl(spec);
  } else {
    const m = BARE.exec(spec);
    if (!m) {
      throw new ImportRefused(
        `import ${quote(specifier)}: name a package with an exact version (zod@3.22.4, @scope/name@1.2.3, name@1.2.3/path/file.js) or a URL under ${base}`,
      );
    }
    const packageDir = `${base}${m[1]}@${m[2]}`;
    url = parseUrl(`${packageDir}${m[3] ?? source.entry}`);
    // `zod@3.22.4/../other@latest/x` would leave the package the specifier names.
    if (url && !(url.href === packageDir || url.href.startsWith(`${packageDir}/`))) {
      throw new ImportRefused(`import ${quote(specifier)}: the path leaves ${m[1]}@${m[2]}`);
    }
  }
  if (!url) throw new ImportRefused(`import ${quote(specifier)}: only modules on the import CDN (${base}) can be imported`);
  const problem = moduleUrlProblem(source, url);
  if (problem) throw new ImportRefused(`import ${quote(specifier)}: ${problem}`);
  return { kind: "cdn", url: url.href, ...(pin ? { pin } : {}) };
}

/** The source text of a data: URL module, or undefined when it is not valid (base64, percent-encoding, UTF-8). */
export function dataModuleText(url: string): string | undefined {
  const m = DATA_JS.exec(url);
  if (!m) return undefined;
  const payload = url.slice(m[0].length);
  try {
    const bytes = m[2] ? Buffer.from(payload, "base64") : Buffer.from(decodeURIComponent(payload), "utf8");
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    return undefined;
  }
}
