import crypto from "node:crypto";
import http from "node:http";
import { expect } from "chai";
import { SandboxPool } from "../executor/sandbox/host/pool";
import { ModuleFetcher, type ImportConfig } from "../executor/sandbox/host/modules";
import { MAX_IMPORT_DEPTH, MAX_MODULES_PER_RUN, resolveImport, type ImportSource } from "../executor/sandbox/imports";
import { DEFAULT_LIMITS, type Host, type HostCall, type RunLimits, type RunResult } from "../executor/sandbox/types";
import { countCall, toHostCall, type CallCounts } from "../executor/sandbox/host/call-checks";
import { ModuleCache } from "../executor/sandbox/host/module-cache";
import { outsideGraph, outsideGraphName } from "../executor/sandbox/process/module-graph";
import { getQuickJS } from "quickjs-emscripten";
import { countingServer, stubResolver } from "./helpers/network";
import { JS_HEADERS as JS, zodBundle } from "./helpers/cdn";

const sri = (bytes: string | Buffer, alg = "sha384") => `${alg}-${crypto.createHash(alg).update(bytes).digest("base64")}`;

/** Resolves once `check()` holds (polled every 20 ms); fails after `ms`. */
async function waitFor(check: () => boolean, ms: number): Promise<void> {
  const until = Date.now() + ms;
  while (!check()) {
    if (Date.now() > until) expect.fail(`not within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * A CDN double on loopback: each path answers a module (or a failure), and every request is
 * counted by path. `mutable` can be changed by a test (a CDN that changes what a URL serves).
 */
async function cdnDouble(zod: string) {
  const hits = new Map<string, number>();
  const mutable = { body: "export const v = 'first';" };
  /** Bytes of body the double has written for the slow routes, and their responses still open. */
  const slow = { written: 0, open: 0 };
  /** A module of `size` bytes, written 16 KB every 20 ms (with its length declared, or not), until the client goes away. */
  const dribble = (res: http.ServerResponse, size: number, declared: boolean) => {
    const body = Buffer.from(`export const s = "${"x".repeat(size - 21)}";\n`);
    res.writeHead(200, { ...JS, ...(declared ? { "content-length": String(body.length) } : {}) });
    let at = 0;
    let closed = false;
    slow.open++;
    res.on("close", () => {
      closed = true;
      slow.open--;
    });
    const tick = () => {
      if (closed) return;
      if (at >= body.length) return void res.end();
      const chunk = body.subarray(at, at + 16 * 1024);
      at += chunk.length;
      slow.written += chunk.length;
      res.write(chunk);
      setTimeout(tick, 20);
    };
    tick();
  };
  const modules: Record<string, string> = {
    "/npm/zod@3.22.4/+esm": zod,
    "/npm/a@1.0.0/+esm": 'import { b } from "/npm/b@1.0.0/+esm"; export const a = "a" + b;',
    "/npm/b@1.0.0/+esm": 'export const b = "b";',
    "/npm/rel@1.0.0/lib/index.js": 'export { x } from "./x.js"; export { y } from "../y.js";',
    "/npm/rel@1.0.0/lib/x.js": "export const x = 1;",
    "/npm/rel@1.0.0/y.js": "export const y = 2;",
    "/npm/cyc-a@1.0.0/+esm": 'import { b } from "/npm/cyc-b@1.0.0/+esm"; export const a = "A"; export const viaB = () => b();',
    "/npm/cyc-b@1.0.0/+esm": 'import { a } from "/npm/cyc-a@1.0.0/+esm"; export const b = () => a + "B";',
    "/npm/syntax@1.0.0/+esm": "export const = ;",
    "/npm/escape@1.0.0/+esm": 'import "http://169.254.169.254/latest/meta-data/"; export const x = 1;',
    "/npm/inline@1.0.0/+esm": `import d from "data:text/javascript;base64,${Buffer.from("export default 42;").toString("base64")}"; export const d2 = d;`,
    "/npm/many@1.0.0/+esm": Array.from({ length: MAX_MODULES_PER_RUN + 5 }, (_, i) => `import "./m${i}.js";`).join("\n"),
    "/zod@3.22.4": 'export * from "/v135/zod@3.22.4/es2022/zod.mjs";',
    "/v135/zod@3.22.4/es2022/zod.mjs": zod,
    "/npm/tagged@latest/+esm": "export const t = 'mutable';",
    "/npm/tagger@1.0.0/+esm": 'export { t } from "/npm/tagged@latest/+esm";',
    "/npm/tagger@1.0.0/rel.js": 'export { t } from "../tagged@latest/+esm";',
  };
  const server = await countingServer((req, res) => {
    const url = req.url ?? "";
    hits.set(url, (hits.get(url) ?? 0) + 1);
    const chain = /^\/npm\/chain@1\.0\.0\/(\d+)\.js$/.exec(url);
    if (chain) {
      const n = Number(chain[1]);
      return res.writeHead(200, JS).end(n > 0 ? `export { v } from "./${n - 1}.js";` : "export const v = 'bottom';");
    }
    if (/^\/npm\/many@1\.0\.0\/m\d+\.js$/.test(url)) return res.writeHead(200, JS).end("export {};");
    if (/^\/npm\/big@1\.0\.0\/\d+\.js$/.test(url)) return dribble(res, 600 * 1024, true);
    if (/^\/npm\/stream@1\.0\.0\/\d+\.js$/.test(url)) return dribble(res, 600 * 1024, false);
    if (/^\/npm\/mid@1\.0\.0\/\d+\.js$/.test(url)) return res.writeHead(200, JS).end(`export const s = "${"m".repeat(200 * 1024)}";`);
    if (url === "/npm/mutable@1.0.0/+esm") return res.writeHead(200, JS).end(mutable.body);
    if (url === "/npm/html@1.0.0/+esm") return res.writeHead(200, { "content-type": "text/html" }).end("<html>export const x = 1</html>");
    if (url === "/npm/binary@1.0.0/+esm") return res.writeHead(200, JS).end(Buffer.from([0x65, 0x78, 0xff, 0xfe]));
    if (url === "/npm/huge@1.0.0/+esm") return res.writeHead(200, JS).end(`export const s = "${"x".repeat(200 * 1024)}";`);
    if (url === "/npm/slow@1.0.0/+esm") return; // never answers
    if (url.startsWith("/npm/redirect@1.0.0/")) return res.writeHead(302, { location: `http://127.0.0.1:${victim.port}/steal` }).end();
    const body = modules[url];
    if (body === undefined) return res.writeHead(404, { "content-type": "text/plain" }).end("not found");
    res.writeHead(200, JS).end(body);
  });
  const victim = await countingServer((req, res) => res.end("secret"));
  return { server, victim, hits, mutable, slow, base: `http://127.0.0.1:${server.port}/npm/`, root: `http://127.0.0.1:${server.port}/` };
}

describe("executor sandbox: imports from the CDN", function () {
  this.timeout(60_000);
  let pool: SandboxPool;
  let zod: string;
  let cdn: Awaited<ReturnType<typeof cdnDouble>>;
  let fetcher: ModuleFetcher;

  const limitsWith = (overrides: Partial<RunLimits> = {}): RunLimits => ({ ...DEFAULT_LIMITS, timeoutMs: 10_000, ...overrides });
  /** A host that answers imports as the executor's does (executor/host.ts), from `modules`; records every call. */
  function importHost(limits: RunLimits, modules: ModuleFetcher) {
    const calls: HostCall[] = [];
    const imports = modules.forRun(Date.now() + limits.timeoutMs);
    const host: Host = async (call) => {
      calls.push(call);
      if (call.op === "import") return imports(call.url, call.integrity);
      throw new Error(`unexpected host call ${call.op}`);
    };
    return { host, calls };
  }
  const run = async (code: string, params: unknown = {}, opts: { limits?: Partial<RunLimits>; source?: ImportSource; modules?: ModuleFetcher; } = {}) => {
    const limits = limitsWith(opts.limits);
    const modules = opts.modules ?? fetcher;
    const { host, calls } = importHost(limits, modules);
    const request = { code: Buffer.from(code), ipfsId: "QmImports", paramsJson: JSON.stringify(params), limits, imports: opts.source ?? modules.config.source };
    const result = await pool.run(request, host);
    return { ...result, calls, imports: calls.filter((c) => c.op === "import").map((c) => (c as { url: string }).url) };
  };
  const newFetcher = (config: Partial<ImportConfig> = {}) => new ModuleFetcher({ source: { base: cdn.base, entry: "/+esm" }, ...config });
  const failed = (r: RunResult, message: string | RegExp) => {
    expect(r.hasError, JSON.stringify(r)).to.equal(true);
    if (typeof message === "string") expect(r.error?.message).to.equal(message);
    else expect(r.error?.message).to.match(message);
  };

  before(async () => {
    zod = zodBundle();
    cdn = await cdnDouble(zod);
    fetcher = newFetcher();
    pool = new SandboxPool({ size: 2 });
  });

  after(async () => {
    await pool.close();
    await cdn.server.close();
    await cdn.victim.close();
  });

  describe("as Chipotle: name@version from the CDN", function () {
    it("imports zod@3.22.4 and validates with it; showImportDetails lists the module and its SHA-384, also in the logs", async () => {
      const code = `import { z } from "zod@3.22.4";
        async function main({ email }) {
          const details = Lit.Actions.showImportDetails();
          return { ok: z.string().email().safeParse(email).success, bad: z.string().email().safeParse("nope").success, details };
        }`;
      const r = await run(code, { email: "a@b.co" });
      expect(r.hasError, r.logs).to.equal(false);
      const url = `${cdn.base}zod@3.22.4/+esm`;
      expect(r.response).to.deep.equal({ ok: true, bad: false, details: [{ url, hash: sri(zod) }] });
      expect(r.logs).to.equal(`[Import Details]\n${JSON.stringify([{ url, hash: sri(zod) }], null, 2)}\n`); // as Chipotle logs it
      expect(r.imports).to.deep.equal([url]);
    });

    it("Chipotle's own import test (lit-actions/tests/it.rs, import_rewrite_cdn) runs unchanged", async () => {
      const code = `import { z } from "zod@3.22.4/+esm";

async function main() {
    const schema = z.string();
    const result = schema.safeParse("hello");
    Lit.Actions.setResponse({ response: String(result.success) });
}
`;
      const r = await run(code);
      expect([r.hasError, r.response], r.logs).to.deep.equal([false, true]);
    });

    it("fetches a module once for every run (the relayer's cache), each run still counting it", async () => {
      const modules = newFetcher();
      const before = cdn.hits.get("/npm/zod@3.22.4/+esm") ?? 0;
      const code = 'import { z } from "zod@3.22.4"; export const n = 1; async function main() { return z.number().parse(7) }';
      const runs = await Promise.all([run(code, {}, { modules }), run(code, {}, { modules }), run(code, {}, { modules })]);
      for (const r of runs) expect([r.hasError, r.response, r.imports.length], r.logs).to.deep.equal([false, 7, 1]);
      expect((cdn.hits.get("/npm/zod@3.22.4/+esm") ?? 0) - before).to.equal(1);
      expect(modules.stats()).to.deep.equal({ entries: 1, bytes: Buffer.byteLength(zod) });
      // each run counted the module against its fetch budget, cached or not
      const limited = await run('import { z } from "zod@3.22.4";\nLit.Actions.setResponse({ response: await fetch("http://127.0.0.1:1/").catch((e) => e.message) })', {}, { modules, limits: { maxFetches: 1 } });
      expect([limited.hasError, limited.response, limited.error?.limit]).to.deep.equal([false, "fetch limit exceeded: at most 1 fetches per run (maxFetches)", undefined]); // caught by the action
    });

    it("resolves root-relative (/npm/...), relative (./, ../) and data: imports inside modules; cycles load once", async () => {
      const r = await run(`import { a } from "a@1.0.0"; import { x, y } from "rel@1.0.0/lib/index.js"; import { viaB } from "cyc-a@1.0.0"; import { d2 } from "inline@1.0.0";
        async function main() { return [a, x, y, viaB(), d2] }`);
      expect(r.hasError, r.logs).to.equal(false);
      expect(r.response).to.deep.equal(["ab", 1, 2, "AB", 42]);
      expect(new Set(r.imports).size).to.equal(r.imports.length); // each module asked once
      expect(r.imports).to.have.members(["a@1.0.0/+esm", "b@1.0.0/+esm", "rel@1.0.0/lib/index.js", "rel@1.0.0/lib/x.js", "rel@1.0.0/y.js", "cyc-a@1.0.0/+esm", "cyc-b@1.0.0/+esm", "inline@1.0.0/+esm"].map((p) => cdn.base + p));
    });

    it("with an esm.sh-style CDN (base at the root, no entry suffix), follows /v135/... paths", async () => {
      const modules = new ModuleFetcher({ source: { base: cdn.root, entry: "" } });
      const r = await run('import { z } from "zod@3.22.4"; async function main() { return z.string().parse("ok") }', {}, { modules });
      expect([r.hasError, r.response], r.logs).to.deep.equal([false, "ok"]);
      expect(r.imports).to.deep.equal([`${cdn.root}zod@3.22.4`, `${cdn.root}v135/zod@3.22.4/es2022/zod.mjs`]);
    });

    it("a module action may use top-level await, setResponse at top level, and dynamic import() of a module it imports statically", async () => {
      const r = await run(`import { b } from "b@1.0.0"; const again = await import("b@1.0.0"); Lit.Actions.setResponse({ response: { b, same: again.b === b } });`);
      expect([r.hasError, r.response], r.logs).to.deep.equal([false, { b: "b", same: true }]);
      const other = await run(`import { b } from "b@1.0.0"; async function main() { return import("a@1.0.0").then(() => "loaded", (e) => e.name + ": " + e.message) }`);
      expect(other.response).to.equal('TypeError: import "http://127.0.0.1:' + cdn.server.port + '/npm/a@1.0.0/+esm": not in the action\'s static imports; import() can load only modules the action imports statically');
      expect(other.imports).to.deep.equal([`${cdn.base}b@1.0.0/+esm`]);
    });

    it("an import() the resolver refuses says which specifier and why (QuickJS loses a normalizer's error: it named the module \"\")", async () => {
      const r = await run(`import { b } from "b@1.0.0"; async function main() { return Promise.all(["zod@latest", "./local.js", "node:fs"].map((s) => import(s).then(() => "loaded", (e) => e.name + ": " + e.message))) }`);
      expect(r.response, r.logs).to.deep.equal([
        'TypeError: import "zod@latest": name a package with an exact version (zod@3.22.4, @scope/name@1.2.3, name@1.2.3/path/file.js) or a URL under ' + cdn.base,
        'TypeError: import "./local.js": an action has no URL to resolve a relative path against; import a package by name and exact version (zod@3.22.4)',
        `TypeError: import "node:fs": only modules on the import CDN (${cdn.base}) can be imported`,
      ]);
      expect(r.imports).to.deep.equal([`${cdn.base}b@1.0.0/+esm`]);
    });

    it("a script (no import or export) runs as before: no host call, import() a clear error, the word import in strings and comments harmless", async () => {
      const r = await run('// import { z } from "zod@3.22.4"\nasync function main() { const s = "import x from \'y\'"; return [s.length, await import("zod@3.22.4").catch((e) => e.name + ": " + e.message)] }');
      // the message names the specifier (review finding: it said import "")
      expect([r.hasError, r.response], r.logs).to.deep.equal([false, [17, 'TypeError: import "zod@3.22.4": not in the action\'s static imports; import() can load only modules the action imports statically']]);
      expect(r.calls).to.deep.equal([]);
      // a script's own syntax error is still reported where it is
      const bad = await run("// export this later\nasync function main() { return 1 +; }");
      expect(bad.error?.message).to.equal("SyntaxError: unexpected token in expression: ';'");
      expect(bad.error?.stack).to.include("action.js:2:");
    });

    it("an import of a name the module does not export fails the run before the action runs", async () => {
      const r = await run('console.log("ran"); import { nope } from "b@1.0.0"; async function main() { return 1 }');
      failed(r, `SyntaxError: Could not find export 'nope' in module '${cdn.base}b@1.0.0/+esm'`);
      expect(r.logs).to.not.include("ran");
    });

    it("a module's syntax error is reported where it is, before anything is fetched", async () => {
      const r = await run('import { z } from "zod@3.22.4";\nconst a = ;\nasync function main() { return 1 }');
      failed(r, "SyntaxError: unexpected token in expression: ';'");
      expect(r.error?.stack).to.include("action.js:2:");
      expect(r.calls).to.deep.equal([]);
    });
  });

  describe("integrity pins (#sha384-...)", function () {
    it("runs when the module matches the pin (sha384, sha256, sha512), and not at all when it does not", async () => {
      for (const alg of ["sha384", "sha256", "sha512"]) {
        const ok = await run(`import { b } from "b@1.0.0#${sri('export const b = "b";', alg)}"; async function main() { return b }`);
        expect([ok.hasError, ok.response], ok.logs).to.deep.equal([false, "b"]);
      }
      const wrong = sri("export const b = 'evil';");
      const r = await run(`console.log("the action ran"); import { b } from "b@1.0.0#${wrong}"; async function main() { return b }`);
      failed(r, `TypeError: import: integrity check failed for ${cdn.base}b@1.0.0/+esm: the import pins ${wrong}, the CDN served ${sri('export const b = "b";')}`);
      expect(r.logs).to.not.include("the action ran");
      // a sha256 or sha512 pin is checked by the sandbox process (the relayer compares only SHA-384 pins, with the hash it keeps)
      const wrong256 = sri("export const b = 'evil';", "sha256");
      const r256 = await run(`import { b } from "b@1.0.0#${wrong256}"; async function main() { return b }`);
      failed(r256, `TypeError: import: integrity check failed for ${cdn.base}b@1.0.0/+esm: the import pins ${wrong256}, the module is ${sri('export const b = "b";')}`);
      // two pins of one module must both hold; a second import's pin is checked against the bytes already here
      const both = await run(`import { b } from "b@1.0.0#${sri('export const b = "b";', "sha512")}"; import { b as c } from "b@1.0.0#${wrong256}"; async function main() { return b }`);
      failed(both, /integrity check failed/);
    });

    it("a pin that is not one is refused before anything is fetched", async () => {
      const r = await run('import { b } from "b@1.0.0#sha384-short"; async function main() { return b }');
      failed(r, /^TypeError: import "b@1\.0\.0#sha384-short": what follows "#" must be an integrity pin/);
      expect(r.calls).to.deep.equal([]);
    });

    it("the shared cache cannot hand one run a module the CDN did not serve for that URL, whatever another run pinned", async () => {
      const modules = newFetcher();
      const first = "export const v = 'first';";
      const second = "export const v = 'second';";
      cdn.mutable.body = first;
      const code = (pin = "") => `import { v } from "mutable@1.0.0${pin}"; async function main() { return v }`;
      const hits = () => cdn.hits.get("/npm/mutable@1.0.0/+esm") ?? 0;
      const h0 = hits();
      expect((await run(code(), {}, { modules })).response).to.equal("first"); // account A, unpinned: cached
      // account B pins bytes the CDN never served: refused; A's cached module is untouched
      const forged = await run(code(`#${sri("export const v = 'forged';")}`), {}, { modules });
      expect(forged.hasError).to.equal(true);
      expect((await run(code(), {}, { modules })).response).to.equal("first");
      expect(hits() - h0).to.equal(2); // the pinned mismatch was fetched again, once
      // the CDN now serves other bytes for the URL: a run that pins them gets them (fetched again), and the cache keeps what the CDN served last
      cdn.mutable.body = second;
      expect((await run(code(`#${sri(second)}`), {}, { modules })).response).to.equal("second");
      expect((await run(code(), {}, { modules })).response).to.equal("second");
      expect((await run(code(`#${sri(first)}`), {}, { modules })).error?.message).to.match(/integrity check failed/);
      cdn.mutable.body = first;
    });
  });

  describe("hostile specifiers and CDN answers", function () {
    for (const [specifier, message] of [
      ["zod@3.22.4/../../gh/evil/repo@1/x.js", /the path leaves zod@3\.22\.4$/],
      ["zod@3.22.4/%2e%2e/other@latest/+esm", /name a package with an exact version/],
      ["http://169.254.169.254/latest/meta-data/", /only modules on the import CDN \(http:\/\/127\.0\.0\.1:\d+\/npm\/\) can be imported$/],
      ["http://127.0.0.1:1/npm/zod@3.22.4/+esm", /only modules on the import CDN/],
      ["./local.js", /an action has no URL to resolve a relative path against/],
      ["zod", /name a package with an exact version/],
      ["zod@^3.22.0", /name a package with an exact version/],
      ["zod@latest", /name a package with an exact version/],
      ["node:crypto", /only modules on the import CDN/],
      ["file:///etc/passwd", /only modules on the import CDN/],
    ] as const) {
      it(`refuses import "${specifier}" before any host call`, async () => {
        const r = await run(`import x from ${JSON.stringify(specifier)}; async function main() { return 1 }`);
        failed(r, message);
        expect(r.calls).to.deep.equal([]);
      });
    }

    it("a full URL, a root-relative or a relative path that names a tag is refused as the bare name@tag is (also inside a CDN module, and by the relayer)", async () => {
      const tag = `a module URL names a package with an exact version (${cdn.base}name@1.2.3/...): tagged@latest is not an exact version (a range or a tag may name other content tomorrow)`;
      const direct = await run(`import { t } from "${cdn.base}tagged@latest/+esm"; async function main() { return t }`);
      failed(direct, `TypeError: import "${cdn.base}tagged@latest/+esm": ${tag}`);
      expect(direct.calls).to.deep.equal([]);
      failed(await run(`import { t } from "tagger@1.0.0"; async function main() { return t }`), `TypeError: import "/npm/tagged@latest/+esm": ${tag} (imported by ${cdn.base}tagger@1.0.0/+esm)`);
      failed(await run(`import { t } from "tagger@1.0.0/rel.js"; async function main() { return t }`), `TypeError: import "../tagged@latest/+esm": ${tag} (imported by ${cdn.base}tagger@1.0.0/rel.js)`);
      const connections = cdn.server.connections;
      for (const url of [`${cdn.base}tagged@latest/+esm`, `${cdn.base}tagged/+esm`, `${cdn.base}tagged%40latest/+esm`]) {
        await fetcher.load(url, [], Date.now() + 1000).then(
          () => expect.fail(`fetched ${url}`),
          (err: Error) => expect(err.message).to.match(/is not a module URL on the import CDN$/),
        );
      }
      expect(cdn.server.connections).to.equal(connections);
      expect(cdn.hits.get("/npm/tagged@latest/+esm") ?? 0).to.equal(0);
    });

    it("the relayer refuses a module URL off the CDN even if a sandbox asked for it (it never connects)", async () => {
      const connections = cdn.victim.connections;
      for (const url of ["http://169.254.169.254/latest/meta-data/", `http://127.0.0.1:${cdn.victim.port}/npm/x@1.0.0/+esm`, `${cdn.base}a@1.0.0/+esm#x`, `${cdn.base}../steal`]) {
        await fetcher.load(url, [], Date.now() + 1000).then(
          () => expect.fail(`fetched ${url}`),
          (err: Error) => expect(err.message).to.match(/is not a module URL on the import CDN$/),
        );
      }
      expect(cdn.victim.connections).to.equal(connections);
    });

    it("a module importing an address off the CDN fails the run, and nothing reaches that address", async () => {
      const r = await run('import { x } from "escape@1.0.0"; async function main() { return x }');
      failed(r, `TypeError: import "http://169.254.169.254/latest/meta-data/": only modules on the import CDN (${cdn.base}) can be imported (imported by ${cdn.base}escape@1.0.0/+esm)`);
      expect(r.imports).to.deep.equal([`${cdn.base}escape@1.0.0/+esm`]);
    });

    it("a redirect is not followed (not to a private address, not anywhere)", async () => {
      const connections = cdn.victim.connections;
      const r = await run('import x from "redirect@1.0.0"; async function main() { return 1 }');
      failed(r, `TypeError: import: ${cdn.base}redirect@1.0.0/+esm answered a redirect (HTTP 302); imports follow no redirect`);
      expect(cdn.victim.connections).to.equal(connections);
    });

    it("a 404, a non-JavaScript answer, bytes that are not UTF-8, a syntax error: each a clear error", async () => {
      failed(await run('import x from "missing@1.0.0"; async function main() { return 1 }'), `TypeError: import: ${cdn.base}missing@1.0.0/+esm answered HTTP 404`);
      failed(await run('import x from "html@1.0.0"; async function main() { return 1 }'), `TypeError: import: ${cdn.base}html@1.0.0/+esm is not JavaScript (content-type "text/html")`);
      failed(await run('import x from "binary@1.0.0"; async function main() { return 1 }'), `TypeError: import: ${cdn.base}binary@1.0.0/+esm is not UTF-8 text`);
      const syntax = await run('import x from "syntax@1.0.0"; async function main() { return 1 }');
      failed(syntax, "SyntaxError: variable name expected");
      expect(syntax.error?.stack).to.include(`${cdn.base}syntax@1.0.0/+esm:1:`);
    });

    it("a module over the size limit is refused; the bytes of a run are bounded in all", async () => {
      const small = newFetcher({ maxModuleBytes: 100 * 1024 });
      failed(await run('import { s } from "huge@1.0.0"; async function main() { return s.length }', {}, { modules: small }), `TypeError: import: ${cdn.base}huge@1.0.0/+esm is larger than 102400 bytes (VESTA_IMPORT_MAX_MODULE_BYTES)`);
      expect(small.stats().entries).to.equal(0);
      const perRun = newFetcher({ maxRunBytes: Buffer.byteLength(zod) + 10 });
      const r = await run('import { z } from "zod@3.22.4"; import { a } from "a@1.0.0"; async function main() { return 1 }', {}, { modules: perRun });
      failed(r, /^TypeError: import limit exceeded: the modules of one run are at most \d+ bytes in all \(VESTA_IMPORT_MAX_RUN_BYTES\)/);
    });

    it("a run's bytes are reserved before the bodies are read: a declared length past the run's budget stops its downloads at once", async () => {
      // 10 modules of 600 KB (each written over ~0.8 s) against a budget of 1 MB: the second declared length passes it.
      const modules = newFetcher({ maxModuleBytes: 1024 * 1024, maxRunBytes: 1024 * 1024 });
      const written = cdn.slow.written;
      const started = Date.now();
      const r = await run(`${Array.from({ length: 10 }, (_, i) => `import "big@1.0.0/${i}.js";`).join("\n")}\nasync function main() { return 1 }`, {}, { modules });
      const ms = Date.now() - started;
      failed(r, /^TypeError: import limit exceeded: the modules of one run are at most 1048576 bytes in all \(VESTA_IMPORT_MAX_RUN_BYTES\)/);
      await waitFor(() => cdn.slow.open === 0, 2000);
      console.log(`      failed in ${ms} ms; the CDN wrote ${cdn.slow.written - written} bytes of the 6 MB asked for`);
      expect(cdn.slow.written - written).to.be.below(512 * 1024); // before: all of it (6 MB), read to the end, then refused
      expect(modules.stats().entries, "nothing of a run over its budget is cached").to.equal(0);
    });

    it("without a declared length, a run stops reading when its budget is passed", async () => {
      const modules = newFetcher({ maxModuleBytes: 1024 * 1024, maxRunBytes: 1024 * 1024 });
      const written = cdn.slow.written;
      const r = await run(`import "stream@1.0.0/0.js"; import "stream@1.0.0/1.js"; import "stream@1.0.0/2.js"; async function main() { return 1 }`, {}, { modules });
      failed(r, /^TypeError: import limit exceeded: the modules of one run are at most 1048576 bytes in all/);
      await waitFor(() => cdn.slow.open === 0, 2000);
      console.log(`      the CDN wrote ${cdn.slow.written - written} bytes of the 1.8 MB asked for (budget 1 MB)`);
      expect(cdn.slow.written - written).to.be.below(1024 * 1024 + 3 * 64 * 1024);
      expect(modules.stats().entries).to.equal(0);
    });

    it("a run over its budget evicts nothing of what others cached; one run fills at most a quarter of the cache", async () => {
      const modules = newFetcher({ maxModuleBytes: 1024 * 1024, maxRunBytes: 1024 * 1024, cacheBytes: 2 * 1024 * 1024 });
      const victim = 'import { b } from "b@1.0.0"; async function main() { return b }';
      const hits = () => cdn.hits.get("/npm/b@1.0.0/+esm") ?? 0;
      expect((await run(victim, {}, { modules })).response).to.equal("b");
      const h0 = hits();
      const attack = await run(`${Array.from({ length: 10 }, (_, i) => `import "big@1.0.0/${10 + i}.js";`).join("\n")}\nasync function main() { return 1 }`, {}, { modules });
      expect(attack.hasError).to.equal(true);
      expect((await run(victim, {}, { modules })).response).to.equal("b");
      expect(hits() - h0, "the victim's module is still cached").to.equal(0);
      // A run within its budget: 3 modules of 200 KB in a cache of 1 MB (a quarter: 256 KB) leave one of them cached.
      const small = newFetcher({ cacheBytes: 1024 * 1024 });
      const r = await run('import "mid@1.0.0/0.js"; import "mid@1.0.0/1.js"; import "mid@1.0.0/2.js"; async function main() { return 1 }', {}, { modules: small });
      expect([r.hasError, small.stats().entries], r.logs).to.deep.equal([false, 1]);
    });

    it("a module URL with a query string or a fragment is refused (each would be another URL, fetched and cached again, of the same module)", async () => {
      for (const spec of [`${cdn.base}b@1.0.0/+esm?1`, `${cdn.base}b@1.0.0/+esm?`]) {
        const r = await run(`import { b } from ${JSON.stringify(spec)}; async function main() { return b }`);
        failed(r, `TypeError: import ${JSON.stringify(spec)}: a module URL has no query string or fragment (each would be another URL of the same module, fetched and cached again)`);
        expect(r.calls).to.deep.equal([]);
      }
      const connections = cdn.server.connections;
      for (const url of [`${cdn.base}b@1.0.0/+esm?1`, `${cdn.base}b@1.0.0/+esm?`, `${cdn.base}b@1.0.0/+esm#1`]) {
        await fetcher.load(url, [], Date.now() + 1000).then(
          () => expect.fail(`fetched ${url}`),
          (err: Error) => expect(err.message).to.match(/is not a module URL on the import CDN$/),
        );
      }
      expect(cdn.server.connections).to.equal(connections);
    });

    it("a CDN that never answers costs the run its time limit, no more", async () => {
      const started = Date.now();
      const r = await run('import x from "slow@1.0.0"; async function main() { return 1 }', {}, { limits: { timeoutMs: 1500 } });
      expect(r.hasError).to.equal(true);
      expect(r.error?.limit).to.equal("timeoutMs");
      expect(Date.now() - started).to.be.below(5000);
    });

    it(`nests at most ${MAX_IMPORT_DEPTH} levels; a chain that deep loads`, async () => {
      const ok = await run(`import { v } from "chain@1.0.0/${MAX_IMPORT_DEPTH - 1}.js"; async function main() { return v }`);
      expect([ok.hasError, ok.response], ok.logs).to.deep.equal([false, "bottom"]);
      const deep = await run(`import { v } from "chain@1.0.0/${MAX_IMPORT_DEPTH}.js"; async function main() { return v }`);
      failed(deep, new RegExp(`^TypeError: import "\\./0\\.js": imports nest at most ${MAX_IMPORT_DEPTH} levels deep`));
      expect(deep.imports).to.have.length(MAX_IMPORT_DEPTH);
    });

    it(`at most ${MAX_MODULES_PER_RUN} modules: a graph larger than that stops before asking for more`, async () => {
      const r = await run('import "many@1.0.0"; async function main() { return 1 }');
      failed(r, `TypeError: import limit exceeded: at most ${MAX_MODULES_PER_RUN} modules per run`);
      expect(r.imports).to.have.length(1);
      const distinct = await run(`${Array.from({ length: 10_000 }, (_, i) => `import "b@1.0.0/f${i}.js";`).join("\n")}\nasync function main() { return 1 }`);
      failed(distinct, `TypeError: import limit exceeded: at most ${MAX_MODULES_PER_RUN} modules per run`);
      expect(distinct.calls).to.deep.equal([]);
    });

    it("the same module imported 10,000 times is fetched once", async () => {
      const code = `${Array.from({ length: 10_000 }, (_, i) => `import { b as b${i} } from "b@1.0.0";`).join("\n")}\nasync function main() { return b9999 }`;
      const r = await run(code);
      expect([r.hasError, r.response], r.logs).to.deep.equal([false, "b"]);
      expect(r.imports).to.deep.equal([`${cdn.base}b@1.0.0/+esm`]);
    });

    it("without an import source a module action fails clearly; the sandbox keeps serving", async () => {
      const limits = limitsWith();
      const { host, calls } = importHost(limits, fetcher);
      const r = await pool.run({ code: Buffer.from('import { b } from "b@1.0.0"; async function main() { return b }'), ipfsId: "QmImports", paramsJson: "{}", limits }, host);
      failed(r, 'TypeError: import "b@1.0.0": imports are not available here');
      expect(calls).to.deep.equal([]);
      expect((await run("async function main() { return 2 }")).response).to.equal(2);
    });
  });

  describe("the CDN's address", function () {
    it("a CDN named by a host name that resolves to a private address is refused; an IP literal the operator configured is reachable", async () => {
      const names = stubResolver(() => [{ address: "127.0.0.1" }]);
      const named = new ModuleFetcher({ source: { base: `http://cdn.test:${cdn.server.port}/npm/`, entry: "/+esm" } }, { resolve: names.resolve });
      const connections = cdn.server.connections;
      await named.load(`http://cdn.test:${cdn.server.port}/npm/b@1.0.0/+esm`, [], Date.now() + 2000).then(
        () => expect.fail("a private CDN was fetched"),
        (err: Error) => expect(err.message).to.match(/^import: cdn\.test is a private or local address \(127\.0\.0\.1: loopback\)/),
      );
      expect(cdn.server.connections).to.equal(connections);
      const literal = await newFetcher().load(`${cdn.base}b@1.0.0/+esm`, [], Date.now() + 2000);
      expect(literal.bytes.toString()).to.equal('export const b = "b";');
    });
  });
});

describe("import host calls: the relayer's own checks (a sandbox that skips its own)", function () {
  const limits = { ...DEFAULT_LIMITS, maxFetches: 1000 };
  it(`counts each import as a fetch and refuses module ${MAX_MODULES_PER_RUN + 1} of a run`, () => {
    const counts: CallCounts = { total: 0, keys: 0, fetches: 0, imports: 0 };
    const call = toHostCall("import", { url: "https://cdn.jsdelivr.net/npm/a@1.0.0/+esm" }, "Qm", limits);
    for (let i = 0; i < MAX_MODULES_PER_RUN; i++) expect(countCall(call, counts, limits)).to.equal(undefined);
    expect(countCall(call, counts, limits)).to.equal("maxImports");
    expect(counts).to.deep.equal({ total: MAX_MODULES_PER_RUN, keys: 0, fetches: MAX_MODULES_PER_RUN, imports: MAX_MODULES_PER_RUN });
    const few = { ...limits, maxFetches: 2 };
    const fresh: CallCounts = { total: 0, keys: 0, fetches: 0, imports: 0 };
    countCall(call, fresh, few);
    countCall({ op: "fetch", url: "https://x.test/", method: "GET", headers: {} }, fresh, few);
    expect(countCall(call, fresh, few)).to.equal("maxFetches");
  });

  it("refuses an import call whose pins are not pins, or too many of them", () => {
    const url = "https://cdn.jsdelivr.net/npm/a@1.0.0/+esm";
    const pin = `sha384-${"A".repeat(64)}`;
    expect(toHostCall("import", { url, integrity: [pin] }, "Qm", limits)).to.deep.equal({ op: "import", url, integrity: [pin] });
    for (const integrity of [["sha384-short"], [1], "sha384-x", Array(9).fill(pin)]) {
      expect(() => toHostCall("import", { url, integrity }, "Qm", limits)).to.throw("import: integrity must be a list of at most 8 pins");
    }
    expect(() => toHostCall("import", { url: "x".repeat(2049) }, "Qm", limits)).to.throw("url is longer than 2048 characters");
  });
});

describe("the relayer's module cache", function () {
  const mod = (url: string, text: string) => ({ url, hash: sri(text), bytes: Buffer.from(text) });
  it("is bounded in entries and bytes, least recently used dropped first; found by URL and by content hash", () => {
    const cache = new ModuleCache(10, 2);
    cache.put(mod("u1", "aaaa"));
    cache.put(mod("u2", "bbbb"));
    expect(cache.get("u1")?.bytes.toString()).to.equal("aaaa"); // u1 now the most recently used
    cache.put(mod("u3", "cccc")); // 3 entries > 2: u2 goes
    expect([cache.get("u2"), cache.withHash(sri("bbbb"))]).to.deep.equal([undefined, undefined]);
    expect(cache.stats()).to.deep.equal({ entries: 2, bytes: 8 });
    cache.put(mod("u4", "dddddd")); // 14 bytes > 10: u1 (the least recently used) goes
    expect([cache.get("u1"), cache.stats()]).to.deep.equal([undefined, { entries: 2, bytes: 10 }]);
    expect(cache.withHash(sri("dddddd"))?.url).to.equal("u4");
    cache.put(mod("u5", "x".repeat(11))); // larger than the whole cache: not kept, nothing dropped
    expect([cache.get("u5"), cache.stats()]).to.deep.equal([undefined, { entries: 2, bytes: 10 }]);
    cache.put(mod("u4", "eeee")); // what the CDN answers now for u4 replaces what it answered before
    expect([cache.withHash(sri("dddddd")), cache.get("u4")?.bytes.toString(), cache.stats()]).to.deep.equal([undefined, "eeee", { entries: 2, bytes: 8 }]);
  });
});

describe("QuickJS's module normalizer and loader (process/module-graph.ts)", function () {
  /** A runtime wired as a run wires it (process/context.ts, run.ts): `normalize` and `load` answer QuickJS. */
  async function importError(normalize: (base: string, requested: string) => string | { error: Error }, load: (name: string) => string | { error: Error }, specifier: string) {
    const qjs = await getQuickJS();
    const rt = qjs.newRuntime();
    rt.setModuleLoader(load, normalize);
    const ctx = rt.newContext();
    try {
      const r = ctx.evalCode(`var out; import(${JSON.stringify(specifier)}).then(() => out = "loaded", (e) => out = e.name + ": " + e.message);`, "action.js");
      (r.error ?? r.value).dispose();
      rt.executePendingJobs();
      return ctx.getProp(ctx.global, "out").consume((h) => ctx.dump(h));
    } finally {
      ctx.dispose();
      rt.dispose();
    }
  }

  it("quickjs-emscripten drops a normalizer's error (the module is named \"\"): a refusal travels in the name, and the loader throws it", async () => {
    expect(await importError((_, requested) => outsideGraph(requested), outsideGraph, "zod@3.22.4")).to.equal(
      `TypeError: import "": not in the action's static imports; import() can load only modules the action imports statically`,
    );
    // a script's import(): what run.ts's normalizer answers with outsideGraphName
    expect(await importError((_, requested) => outsideGraphName(requested), outsideGraph, "zod@3.22.4")).to.equal(
      `TypeError: import "zod@3.22.4": not in the action's static imports; import() can load only modules the action imports statically`,
    );
    // a specifier shaped like a refused name is still only a specifier
    expect(await importError((_, requested) => outsideGraphName(requested), outsideGraph, "vesta:refused:hello")).to.equal(
      `TypeError: import "vesta:refused:hello": not in the action's static imports; import() can load only modules the action imports statically`,
    );
  });
});

describe("import specifiers (sandbox/imports.ts)", function () {
  const source = { base: "https://cdn.jsdelivr.net/npm/", entry: "/+esm" };
  it("resolves as Chipotle's loader does", () => {
    const cases: [string, string, string][] = [
      ["zod@3.22.4", "action.js", "https://cdn.jsdelivr.net/npm/zod@3.22.4/+esm"],
      ["zod@3.22.4/+esm", "action.js", "https://cdn.jsdelivr.net/npm/zod@3.22.4/+esm"],
      ["@scope/pkg@2.0.0", "action.js", "https://cdn.jsdelivr.net/npm/@scope/pkg@2.0.0/+esm"],
      ["date-fns@3.6.0/esm/index.js", "action.js", "https://cdn.jsdelivr.net/npm/date-fns@3.6.0/esm/index.js"],
      ["pkg@1.0.0/dist/./../dist/index.js", "action.js", "https://cdn.jsdelivr.net/npm/pkg@1.0.0/dist/index.js"],
      ["https://cdn.jsdelivr.net/npm/zod@3.22.4/+esm", "action.js", "https://cdn.jsdelivr.net/npm/zod@3.22.4/+esm"],
      ["/npm/@noble/hashes@1.3.2/hmac/+esm", "https://cdn.jsdelivr.net/npm/ethers@6.13.4/+esm", "https://cdn.jsdelivr.net/npm/@noble/hashes@1.3.2/hmac/+esm"],
      ["./utils.js", "https://cdn.jsdelivr.net/npm/zod@3.22.4/lib/index.js", "https://cdn.jsdelivr.net/npm/zod@3.22.4/lib/utils.js"],
    ];
    for (const [spec, referrer, url] of cases) expect(resolveImport(source, spec, referrer).url, spec).to.equal(url);
    const pin = `sha384-${"A".repeat(64)}`;
    expect(resolveImport(source, `zod@3.22.4#${pin}`, "action.js")).to.deep.equal({ kind: "cdn", url: "https://cdn.jsdelivr.net/npm/zod@3.22.4/+esm", pin });
  });

  it("refuses what leaves the npm backend or names no exact version", () => {
    for (const [spec, referrer] of [
      ["zod@3.22.4/../../gh/evil/repo@1/x.js", "action.js"],
      ["https://cdn.jsdelivr.net/gh/user/repo@main/file.js", "action.js"],
      ["https://cdn.jsdelivr.net/npm/zod@3.22.4/%2e%2e/%2e%2e/gh/user/repo@main/x.js", "action.js"],
      ["https://cdn.jsdelivr.net\\npm/../gh/x.js", "action.js"],
      ["../../../gh/user/repo@main/file.js", "https://cdn.jsdelivr.net/npm/pkg@1.0.0/lib/index.js"],
      ["/gh/user/repo@main/file.js", "https://cdn.jsdelivr.net/npm/pkg@1.0.0/+esm"],
      ["https://evil.com/malware.js", "action.js"],
      ["lodash-es", "action.js"],
      ["@scope/pkg", "action.js"],
      ["zod@3", "action.js"],
      ["https://user:pw@cdn.jsdelivr.net/npm/zod@3.22.4/+esm", "action.js"],
    ]) {
      expect(() => resolveImport(source, spec, referrer), spec).to.throw();
    }
  });

  it("refuses a tag, a range or no version in any CDN URL, whatever form names it (full URL, root-relative, relative)", () => {
    const mod = "https://cdn.jsdelivr.net/npm/pkg@1.0.0/lib/index.js";
    for (const [spec, referrer, why] of [
      ["https://cdn.jsdelivr.net/npm/zod@latest/+esm", "action.js", "zod@latest is not an exact version"],
      ["https://cdn.jsdelivr.net/npm/zod/+esm", "action.js", "it names zod without a version"],
      ["https://cdn.jsdelivr.net/npm/zod@3/+esm", "action.js", "zod@3 is not an exact version"],
      ["https://cdn.jsdelivr.net/npm/zod@^3.22.0/+esm", "action.js", "zod@^3.22.0 is not an exact version"],
      ["https://cdn.jsdelivr.net/npm/zod%40latest/+esm", "action.js", "zod@latest is not an exact version"],
      ["https://cdn.jsdelivr.net/npm/@noble/hashes@latest/+esm", "action.js", "@noble/hashes@latest is not an exact version"],
      ["https://cdn.jsdelivr.net/npm/@noble/hashes/+esm", "action.js", "it names @noble/hashes without a version"],
      ["https://cdn.jsdelivr.net/npm/", "action.js", "its path does not start with a package"],
      ["/npm/zod@latest/+esm", mod, "zod@latest is not an exact version"],
      ["/npm/zod/+esm", mod, "it names zod without a version"],
      ["../../zod@next/+esm", mod, "zod@next is not an exact version"],
      ["../../../npm/zod@1.x/+esm", mod, "zod@1.x is not an exact version"],
      ["/npm/v135/zod@3.22.4/+esm", mod, "it names v135 without a version"], // esm.sh's build prefix means nothing under jsDelivr's /npm/
      ["/npm/zod@3.22.4/+esm?v=2", mod, "no query string"],
      // review finding: an encoded / (or \) that a CDN decodes, then resolves, names another package or version
      ["https://cdn.jsdelivr.net/npm/zod@3.22.4%2F..%2Fzod@latest/+esm", "action.js", "an encoded / or \\"],
      ["https://cdn.jsdelivr.net/npm/zod@3.22.4/x%2F..%2F..%2F..%2Fgh%2Fattacker%2Frepo@main%2Fevil.js", "action.js", "an encoded / or \\"],
      ["https://cdn.jsdelivr.net/npm/zod@3.22.4/x%5C..%5Cy.js", "action.js", "an encoded / or \\"],
      ["/npm/zod@3.22.4%2f..%2fzod@latest/+esm", mod, "an encoded / or \\"],
    ] as const) {
      expect(() => resolveImport(source, spec, referrer), spec).to.throw(why);
    }
    const esm = { base: "https://esm.sh/", entry: "" };
    for (const spec of ["/v135/zod@latest/es2022/zod.mjs", "/zod", "/v135/zod/es2022/zod.mjs", "/stable/react@18/es2022/react.mjs"]) {
      expect(() => resolveImport(esm, spec, "https://esm.sh/zod@3.22.4"), spec).to.throw(/exact version/);
    }
  });

  it("keeps every form that names an exact version: files, scoped packages, prereleases, esm.sh's build paths", () => {
    const mod = "https://cdn.jsdelivr.net/npm/pkg@1.0.0/lib/index.js";
    const cases: [string, string, string][] = [
      ["https://cdn.jsdelivr.net/npm/@scope/pkg@2.0.0/dist/x.js", "action.js", "https://cdn.jsdelivr.net/npm/@scope/pkg@2.0.0/dist/x.js"],
      ["@scope/pkg@2.0.0/dist/x.js", "action.js", "https://cdn.jsdelivr.net/npm/@scope/pkg@2.0.0/dist/x.js"],
      ["next@14.0.0-canary.1", "action.js", "https://cdn.jsdelivr.net/npm/next@14.0.0-canary.1/+esm"],
      ["../x@2/y.js", mod, "https://cdn.jsdelivr.net/npm/pkg@1.0.0/x@2/y.js"], // a file inside pkg@1.0.0: its own name is the package's
      ["/npm/pkg@1.0.0/node_modules/dep/index.js", mod, "https://cdn.jsdelivr.net/npm/pkg@1.0.0/node_modules/dep/index.js"],
    ];
    for (const [spec, referrer, url] of cases) expect(resolveImport(source, spec, referrer).url, spec).to.equal(url);
    const esm = { base: "https://esm.sh/", entry: "" };
    for (const [spec, url] of [
      ["zod@3.22.4", "https://esm.sh/zod@3.22.4"],
      ["/v135/zod@3.22.4/es2022/zod.mjs", "https://esm.sh/v135/zod@3.22.4/es2022/zod.mjs"],
      ["/stable/react@18.2.0/es2022/react.mjs", "https://esm.sh/stable/react@18.2.0/es2022/react.mjs"],
      ["/v135/@types/react@18.2.0/index.d.ts", "https://esm.sh/v135/@types/react@18.2.0/index.d.ts"],
    ]) {
      expect(resolveImport(esm, spec, spec.startsWith("/") ? "https://esm.sh/zod@3.22.4" : "action.js").url, spec).to.equal(url);
    }
  });
});
