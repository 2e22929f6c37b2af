import fs from "node:fs";
import path from "node:path";
import { expect } from "chai";
import { newQuickJSWASMModuleFromVariant, newVariant, RELEASE_SYNC } from "quickjs-emscripten";
import { processLauncher } from "../executor/sandbox/host/launchers";
import { SandboxPool } from "../executor/sandbox/host/pool";
import { sandboxFiles } from "../executor/sandbox/host/sandbox-files";
import { WarmContext } from "../executor/sandbox/process/context";
import { readGuestSources } from "../executor/sandbox/process/guest-bindings";
import { ActionRun } from "../executor/sandbox/process/run";
import { layoutOf } from "../executor/sandbox/process/snapshot";
import { DEFAULT_LIMITS, type Host, type RunLimits, type RunResult } from "../executor/sandbox/types";
import { MAX_RUN_MEMORY_MB, wasmBytesFor } from "../executor/sandbox/wasm-memory";
import type { HostAnswer } from "../executor/sandbox/wire/messages";
import { loadConfig } from "../relayer/config";

/**
 * What the sandbox process writes into the QuickJS module's memory when that memory is full (review
 * finding: quickjs-emscripten copies a string into the module through its malloc and writes without
 * checking for NULL; an action that filled its memory, then received a 1 MB fetch answer, had the
 * answer written from address 0 over the static data, the stack and the heap's start: the sandbox
 * process died, "memory access out of bounds"). Nothing may be written where malloc gave nothing: a
 * host string that does not fit is refused with the memory limit (the action may catch it), an
 * allocation that finds no room ends the run with the memory limit, and the process goes on.
 */
const MB = 1024 * 1024;
const limitsWith = (overrides: Partial<RunLimits> = {}): RunLimits => ({ ...DEFAULT_LIMITS, timeoutMs: 10_000, ...overrides });
/** The start of the module's memory: zeros up to its first data segment (1024), then its constant data. No run writes there. */
const LOW_BYTES = 24 * 1024;

const expectMemoryLimit = (result: Pick<RunResult, "hasError" | "error">, message: RegExp) => {
  expect(result.hasError, JSON.stringify(result).slice(0, 500)).to.equal(true);
  expect(result.error?.limit).to.equal("memoryBytes");
  expect(result.error?.message).to.match(message);
};

describe("the sandbox writes nothing where the QuickJS module's malloc gave it nothing", function () {
  this.timeout(120_000);

  describe("in process: a run whose memory is full", function () {
    const wasm = fs.readFileSync(sandboxFiles().wasmFile);
    let memory: WebAssembly.Memory;
    let warm: WarmContext;
    /** The module's malloc and free as it exports them: 0 when there is no room. */
    let malloc: (bytes: number) => number;
    let free: (pointer: number) => void;
    let pristine: Buffer;
    const lowBytes = () => Buffer.from(new Uint8Array(memory.buffer).slice(0, LOW_BYTES));

    before(async () => {
      memory = new WebAssembly.Memory({ initial: 256, maximum: 16384 });
      const wasmBinary = wasm.buffer.slice(wasm.byteOffset, wasm.byteOffset + wasm.byteLength);
      const qjs = await newQuickJSWASMModuleFromVariant(newVariant(RELEASE_SYNC, { wasmMemory: memory, wasmBinary }));
      const module = (qjs as unknown as { module: { _malloc(bytes: number): number; _free(pointer: number): void } }).module;
      malloc = module._malloc;
      free = module._free;
      warm = new WarmContext(qjs, readGuestSources(path.join(__dirname, "..", "executor", "sandbox", "guest")), memory, layoutOf(wasm));
      pristine = lowBytes();
    });

    /**
     * Fills the module's heap as a run at its memory ceiling finds it: the memory may not grow (until
     * the returned function is called), and malloc has `leave` bytes left in one piece. (Freeing
     * `leave` bytes of scattered small blocks instead made what fits depend on the heap's layout,
     * which differs with the checkout's path: a run that fits in one clone did not in another.)
     */
    function fill(leave: number): () => void {
      const grow = memory.grow;
      memory.grow = () => {
        throw new RangeError("the run's ceiling");
      };
      const kept = leave > 0 ? malloc(leave) : 0;
      expect(kept !== 0 || leave === 0, "the heap has the room to leave").to.equal(true);
      for (let size = MB; size >= 8; size >>= 1) for (let p = malloc(size); p !== 0; p = malloc(size));
      if (kept !== 0) free(kept);
      return () => (memory.grow = grow);
    }

    /**
     * Runs `code`; the host answers each call with `answer` (a JSON text), but first fills the heap
     * (fill) when `fills` says so. Checks that the answers went in without a trap, that the start of
     * the memory is as the module left it, and that the process may go on; puts the copy back.
     */
    async function run(code: string, answer: (op: string, argsJson: string) => string, fills: (op: string, argsJson: string) => boolean, leave: number) {
      const failures: string[] = [];
      const restores: (() => void)[] = [];
      let actionRun!: ActionRun;
      const send = (callId: number, op: string, argsJson: string) =>
        setTimeout(() => {
          if (fills(op, argsJson)) restores.push(fill(leave));
          try {
            actionRun.answer(callId, { ok: true, json: answer(op, argsJson) } as HostAnswer);
          } catch (err) {
            failures.push(String(err));
          }
        }, 1);
      actionRun = new ActionRun(warm.fresh, memory, { code, ipfsId: "QmFull", paramsJson: "{}", limits: limitsWith(), imports: { base: "https://cdn.example/npm/", entry: "/+esm" } }, send);
      try {
        const { result, crashed } = await actionRun.start();
        const low = lowBytes();
        expect(failures, "the answers went in without a trap").to.deep.equal([]);
        expect(low.subarray(0, 1024).every((b) => b === 0), "nothing written below the first data segment").to.equal(true);
        expect(low.equals(pristine), "the static data's first 24 KB as the module left them").to.equal(true);
        expect(crashed, "the process goes on").to.equal(false);
        expect(actionRun.release()).to.equal(true);
        warm.reset();
        return { ...result, hasError: result.error !== undefined, response: result.responseJson === null ? null : JSON.parse(result.responseJson) };
      } finally {
        restores.forEach((restore) => restore());
      }
    }

    /** Runs `body` in an action that first waits for a host call during which the heap is filled (`leave` bytes left); its other calls get `answers` by operation. */
    const fullRun = (body: string, answers: Record<string, string> = {}, leave = 256 * 1024) =>
      run(
        `async function main() { const E = ethers; await Lit.Actions.getRpcUrl({ chain: "fill" }); ${body} }`,
        (op, argsJson) => (argsJson.includes('"fill"') ? '"filled"' : (answers[op] ?? '"ok"')),
        (_op, argsJson) => argsJson.includes('"fill"'),
        leave,
      );

    /** The next run on the same context: it starts from the copy and runs. */
    async function nextRun() {
      const run = new ActionRun(warm.fresh, memory, { code: 'async function main() { return "next" }', ipfsId: "QmNext", paramsJson: "{}", limits: limitsWith() }, () => undefined);
      const { result, crashed } = await run.start();
      expect([result.responseJson, crashed]).to.deep.equal(['"next"', false]);
      expect(run.release()).to.equal(true);
      warm.reset();
    }

    it("a fetch answer (6 MB of JSON) that does not fit ends the run with the memory limit, nothing written at address 0; what fits goes on (small answers, host functions, timers, crypto.subtle, a refused import())", async () => {
      const fits = await fullRun(`
        const url = await Lit.Actions.getRpcUrl({ chain: "base" });
        const text = await (await fetch("https://example.com/")).text();
        console.log("logged", { a: 1 });
        await new Promise((resolve) => setTimeout(resolve, 1));
        const digest = (await crypto.subtle.digest("SHA-256", new Uint8Array(8))).byteLength;
        const refused = await import("zod@3.22.4").then(() => "loaded", (e) => e.message.slice(0, 20));
        return [url, text, E.keccak256("0x01").length, digest, refused];`, { getRpcUrl: '"http://rpc"', fetch: JSON.stringify({ status: 200, statusText: "OK", headers: {}, body: "hi" }) });
      expect(fits.hasError, JSON.stringify(fits)).to.equal(false);
      expect(fits.response).to.deep.equal(["http://rpc", "hi", 66, 32, 'import "zod@3.22.4":']);
      const body = "\u0001".repeat(MB);
      const r = await fullRun('const r = await fetch("https://example.com/"); return (await r.text()).length;', { fetch: JSON.stringify({ status: 200, statusText: "OK", headers: {}, body }) });
      expectMemoryLimit(r, /^Error: the host's answer: no room for its \d+ bytes in the run's memory: memory limit exceeded/);
      await nextRun();
    });

    it("a Decrypt answer that does not fit: the action may catch the refusal; uncaught it ends the run with the memory limit", async () => {
      const decrypt = JSON.stringify("d".repeat(MB));
      const caught = await fullRun('try { await Lit.Actions.Decrypt({ pkpId: "0x1", ciphertext: "c" }); } catch (e) { return e.message; }', { decrypt });
      expect(caught.response).to.match(/^the host's answer: no room for its \d+ bytes in the run's memory: memory limit exceeded/);
      const uncaught = await fullRun('return (await Lit.Actions.Decrypt({ pkpId: "0x1", ciphertext: "c" })).length;', { decrypt });
      expectMemoryLimit(uncaught, /no room for its \d+ bytes/);
      await nextRun();
    });

    it("a module of the action's imports that does not fit when QuickJS's loader asks for it: the import fails with the memory limit", async () => {
      // Two imports: the large one arrives first; the heap is full (1 MB left) by the time the small one arrives, and the action is linked.
      const sources: Record<string, string> = { large: `export const large = "${"a".repeat(2 * MB)}";`, small: "export const small = 1;" };
      const answer = (_op: string, argsJson: string) => {
        const { url } = JSON.parse(argsJson) as { url: string };
        const name = url.includes("large@") ? "large" : "small";
        return JSON.stringify({ url, hash: "sha384-test", base64: Buffer.from(sources[name]).toString("base64") });
      };
      const code = 'import { large } from "large@1.0.0";\nimport { small } from "small@1.0.0";\nexport async function main() { return large.length + small; }';
      const r = await run(code, answer, (op, argsJson) => op === "import" && argsJson.includes("small@"), MB);
      expectMemoryLimit(r, /^RangeError: import "https:\/\/cdn\.example\/npm\/large@1\.0\.0\/\+esm": no room for its \d+ bytes in the run's memory: memory limit exceeded/);
      await nextRun();
    });

    it("an ethers result and a guest module's source that do not fit are refused with the memory limit", async () => {
      const ethersResult = await fullRun('try { return E.zeroPadValue("0x01", 300000).length; } catch (e) { return e.message; }');
      expect(ethersResult.response).to.match(/^ethers\.zeroPadValue: no room for its 600004 bytes in the run's memory: memory limit exceeded/);
      const intl = await fullRun('return new Intl.NumberFormat("en").format(1);', {}, 4096);
      expectMemoryLimit(intl, /^Error: loading the sandbox's intl module: no room for its \d+ bytes/);
      await nextRun();
    });

    it("a heap with no room at all: the run ends with the memory limit, the process goes on", async () => {
      const r = await fullRun("return 1;", {}, 0);
      expectMemoryLimit(r, /^memory limit exceeded/);
      await nextRun();
    });
  });

  describe("through a sandbox process", function () {
    it("fetch and Decrypt answers larger than what the run's memory has left: the memory limit, and the next run in the same process", async () => {
      const pool = new SandboxPool({ size: 1 });
      // 8 MB of QuickJS memory: the run's WASM memory has ~30 MB left; the answers are 36 MB of JSON (6 MB of U+0001, each escaped).
      const limits = limitsWith({ memoryBytes: 8 * MB, maxFetchBytes: 6 * MB });
      const big = "\u0001".repeat(6 * MB);
      const host: Host = async (call) => (call.op === "fetch" ? { status: 200, statusText: "OK", headers: {}, body: big } : call.op === "decrypt" ? big : "ok");
      const run = (code: string) => pool.run({ code: Buffer.from(code), ipfsId: "QmFull", paramsJson: "{}", limits }, host);
      try {
        const fetched = await run('async function main() { const held = new Uint8Array(4 << 20); const r = await fetch("https://example.com/"); return [held.length, (await r.text()).length]; }');
        expectMemoryLimit(fetched, /^Error: the host's answer: no room for its \d+ bytes in the run's memory: memory limit exceeded: the action may use at most 8 MB/);
        expect(await run('async function main() { return "next" }')).to.deep.include({ response: "next", hasError: false });
        const decrypted = await run('async function main() { const held = new Uint8Array(4 << 20); return [held.length, (await Lit.Actions.Decrypt({ pkpId: "0x1", ciphertext: "c" })).length]; }');
        expectMemoryLimit(decrypted, /no room for its \d+ bytes in the run's memory/);
        expect(await run('async function main() { return "next" }')).to.deep.include({ response: "next", hasError: false });
        expect(pool.stats()).to.include({ started: 1, replaced: 0 });
      } finally {
        await pool.close();
      }
    });
  });

  describe("a run's memory ceiling within the module's maximum (review finding: VESTA_ACTION_MEMORY_MB of ~670 or more failed every run)", function () {
    const env = { VESTA_MODE: "development", VESTA_RPC_URL: "http://127.0.0.1:8545", VESTA_ACCOUNT_CONFIG_ADDRESS: "0x5FbDB2315678afecb367f032d93F642f64180aa3", VESTA_PAYER_KEYS: `0x${"59".repeat(32)}` };
    const twenty = "async function main() { const a = []; for (let i = 0; i < 20; i++) a.push(new Uint8Array(1 << 20)); return a.length }";
    const runs = async (pool: SandboxPool, memoryBytes: number) => {
      const limits = limitsWith({ memoryBytes });
      for (let i = 0; i < 2; i++) {
        const r = await pool.run({ code: Buffer.from(twenty), ipfsId: "QmLarge", paramsJson: "{}", limits }, async () => "ok");
        expect(r, JSON.stringify(r).slice(0, 300)).to.deep.include({ response: 20, hasError: false });
      }
      expect(pool.stats(), "one process ran both: it was not replaced for its memory").to.include({ started: 1, replaced: 0 });
    };

    it("the configuration takes at most 1343 MB (a run's WASM memory, 1.5 times it plus 32 MB, within the build's 2 GiB) and says why past it", () => {
      expect(MAX_RUN_MEMORY_MB).to.equal(1343);
      expect(wasmBytesFor(1343 * MB)).to.be.at.most(2048 * MB);
      const largest = loadConfig({ ...env, VESTA_ACTION_MEMORY_MB: "1343" });
      expect(largest.limits.memoryBytes).to.equal(1343 * MB);
      expect(largest.sandboxMemoryMb * MB, "the OS ceiling holds the WASM maximum, the V8 heap and Node").to.be.at.least(wasmBytesFor(1343 * MB) + 512 * MB);
      expect(() => loadConfig({ ...env, VESTA_ACTION_MEMORY_MB: "1344" })).to.throw("VESTA_ACTION_MEMORY_MB is at most 1343: a run's WASM memory (1.5 times it, plus 32 MB) must fit the 2 GiB the sandbox's QuickJS build can hold");
    });

    it("at the largest setting, wired as the executor wires it (its WASM maximum, its OS ceiling): a 20 MB action runs, twice in one process", async () => {
      const config = loadConfig({ ...env, VESTA_ACTION_MEMORY_MB: String(MAX_RUN_MEMORY_MB) });
      const pool = new SandboxPool({ size: 1, wasmMaxBytes: wasmBytesFor(config.limits.memoryBytes), launcher: processLauncher({ memoryMb: config.sandboxMemoryMb }) });
      try {
        await runs(pool, config.limits.memoryBytes);
      } finally {
        await pool.close();
      }
    });

    it("a pool's own WASM maximum (1 GiB by default) below a run's ceiling: the run is held to the maximum, and 20 MB actions run (700 MB and the largest setting)", async () => {
      for (const mb of [700, 1343]) {
        const pool = new SandboxPool({ size: 1 });
        try {
          await runs(pool, mb * MB);
        } finally {
          await pool.close();
        }
      }
    });
  });
});
